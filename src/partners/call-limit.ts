// How many calls one partner is sent at once, adapted to how it answers (additive increase,
// multiplicative decrease). A partner that stops answering within our timeout is overloaded, or
// its path to us is: a call we gave up on still runs there, and the retry we send adds to it. On a
// loaded machine the dispatcher's 64 instructions at once, each retried after its timeout, kept
// the rail's five connections busy with calls nobody waited for any more, and its payouts crawled
// at one every two seconds for minutes, where they take milliseconds. Halving the calls in flight
// at each timeout lets the partner catch up; each answer in time lets one more in, up to the cap.
// Only a timeout is taken for overload: a 503 answered at once, a decline or a refused connection
// says nothing about load.

export interface CallSlot {
  /** The call ended; `timedOut` when the partner did not answer within our timeout. */
  release(timedOut: boolean): void;
}

export class AdaptiveCallLimit {
  /** Calls let in at once now (fractional between increases); between `floor` and `cap`. */
  private limit: number;
  private inFlight = 0;
  private readonly waiting: Array<() => void> = [];
  /** Counts the decreases: a call started before the latest belongs to the wave that caused it, and lowers nothing more. */
  private generation = 0;

  constructor(private readonly cap: number, private readonly floor = 1) {
    if (!Number.isInteger(cap) || cap < 1 || !Number.isInteger(floor) || floor < 1 || floor > cap) {
      throw new Error(`call limit: cap ${cap} and floor ${floor} must be integers with 1 <= floor <= cap`);
    }
    this.limit = cap;
  }

  /** Calls let in at once now. */
  get current(): number {
    return Math.floor(this.limit);
  }

  /** Waits for a slot; the caller must release it. */
  async acquire(): Promise<CallSlot> {
    while (this.inFlight >= this.current) await new Promise<void>((resolve) => this.waiting.push(resolve));
    this.inFlight += 1;
    const generation = this.generation;
    let released = false;
    return {
      release: (timedOut) => {
        if (released) return;
        released = true;
        this.inFlight -= 1;
        if (timedOut && generation === this.generation) {
          this.limit = Math.max(this.floor, Math.floor(this.limit / 2));
          this.generation += 1;
        } else if (!timedOut) {
          this.limit = Math.min(this.cap, this.limit + 1 / this.current);
        }
        this.wake();
      },
    };
  }

  /** Wakes as many waiting callers as there are free slots; each checks again, so waking one too many is harmless. */
  private wake(): void {
    for (let free = this.current - this.inFlight; free > 0 && this.waiting.length > 0; free -= 1) this.waiting.shift()!();
  }
}
