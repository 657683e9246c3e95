// A sweep that runs one at a time, for the ledger's workers woken by announcements and timers
// alike (test clock advances, due scheduled runs).

/**
 * Runs `once` one sweep at a time. Asked while a sweep runs, it runs once more after it (however
 * often it was asked), so work announced as a sweep ends is not missed. `settled` hears the
 * outcome of a sweep after which none was asked for, while not stopped.
 */
export class SerialSweeps<T> {
  private running: Promise<void> | null = null;
  private again = false;
  private stopped = false;

  constructor(private readonly once: () => Promise<T>, private readonly settled: (outcome: T) => void = () => undefined) {}

  readonly sweep = (): void => {
    if (this.stopped) return;
    if (this.running !== null) {
      this.again = true;
      return;
    }
    this.running = this.once().then((outcome) => {
      this.running = null;
      if (this.again) {
        this.again = false;
        this.sweep();
      } else if (!this.stopped) {
        this.settled(outcome);
      }
    });
  };

  /** No sweep starts after this; resolves once the one under way ended. */
  async stop(): Promise<void> {
    this.stopped = true;
    await this.running;
  }
}
