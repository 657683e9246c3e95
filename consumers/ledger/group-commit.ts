// Group commit: the batches of all partitions that arrive together are decided and written in
// one Postgres transaction. Partition batches share accounts, so applying them side by side
// would only make them queue on each other's row locks; one transaction per round takes the
// locks once and pays for one commit.
export class GroupCommit<T> {
  private queue: Array<{ items: T[]; alone: boolean; resolve: () => void; reject: (error: unknown) => void }> = [];
  private running: Promise<void> | null = null;

  constructor(private readonly apply: (items: T[]) => Promise<void>, private readonly itemsMax = 2_000) {}

  /** Resolves once `items` are committed, together with whatever else was queued with them. */
  submit(items: T[]): Promise<void> {
    return this.enqueue(items, false);
  }

  /**
   * Resolves once `items` are committed in a round of their own: while a failed round is
   * isolated (src/kafka/consumer.ts), merging its parts with other partitions' work again would
   * let one poison message fail good ones once more.
   */
  submitAlone(items: T[]): Promise<void> {
    return this.enqueue(items, true);
  }

  private enqueue(items: T[], alone: boolean): Promise<void> {
    return new Promise((resolve, reject) => {
      this.queue.push({ items, alone, resolve, reject });
      this.running ??= this.drain();
    });
  }

  private async drain(): Promise<void> {
    // Let the partition batches of the same fetch, handed over in the same tick, join.
    await new Promise((resolve) => setImmediate(resolve));
    while (this.queue.length > 0) {
      const round: typeof this.queue = [];
      let size = 0;
      const joins = () => !this.queue[0].alone && !round[0].alone && size + this.queue[0].items.length <= this.itemsMax;
      while (this.queue.length > 0 && (round.length === 0 || joins())) {
        const next = this.queue.shift()!;
        size += next.items.length;
        round.push(next);
      }
      try {
        await this.apply(round.flatMap((r) => r.items));
        round.forEach((r) => r.resolve());
      } catch (error) {
        // Each partition falls back to its own handling (retries, then dead letters).
        round.forEach((r) => r.reject(error));
      }
    }
    this.running = null;
  }
}
