// Gathers the calls made in one turn of the event loop and applies them as one batch. Under load
// many requests reach the same step together (the ledger's replies to a round resolve their
// requests in one turn), and on this machine a Postgres round trip costs more node CPU than the
// SQL it carries: one statement for all of them is far cheaper than one each.
interface Waiting<T> {
  item: T;
  resolve: () => void;
  reject: (error: unknown) => void;
}

export class TickBatch<T> {
  private waiting: Array<Waiting<T>> = [];

  constructor(private readonly apply: (items: T[]) => Promise<void>, private readonly batchSizeMax = 500) {}

  /** Resolves once `item` has been applied with the others of its turn; rejects with the batch's error. */
  submit(item: T): Promise<void> {
    return new Promise((resolve, reject) => {
      this.waiting.push({ item, resolve, reject });
      if (this.waiting.length === 1) setImmediate(() => this.flush());
      else if (this.waiting.length >= this.batchSizeMax) this.flush();
    });
  }

  private flush(): void {
    const batch = this.waiting;
    this.waiting = [];
    if (batch.length === 0) return;
    this.apply(batch.map((w) => w.item)).then(
      () => { for (const w of batch) w.resolve(); },
      (error) => { for (const w of batch) w.reject(error); },
    );
  }
}
