// The Server-Timing header (W3C Server Timing): how long each step of a request took in this
// process, in milliseconds, so a client or a benchmark sees where a slow answer spent its time:
// auth (rate limit and credential), validate, claim (the Idempotency-Key), handler (for money
// moving routes, the round trip through the ledger), record (storing the outcome), or replay.
export class StageTiming {
  private last = performance.now();
  private readonly stages: string[] = [];

  /** Ends the stage running since the previous mark. */
  end(stage: string): void {
    const now = performance.now();
    this.stages.push(`${stage};dur=${(now - this.last).toFixed(2)}`);
    this.last = now;
  }

  header(): string {
    return this.stages.join(', ');
  }
}
