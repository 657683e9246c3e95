// What a run found: the checks passed, the failures (each with the clients involved), and each
// client's last operations, so a failure can be printed with what led to it.
export interface Failure { check: string; detail: string; clients: number[]; atMs: number }

const TRACE_LINES = 25;

export class Findings {
  readonly failures: Failure[] = [];
  passed = 0;
  private readonly traces = new Map<number, string[]>();
  private readonly started = Date.now();
  constructor(private readonly printFirst = true) {}

  pass(): void { this.passed++; }

  /** Records a failed check; `ok` false is the failure. Returns `ok`, so a caller can branch on it. */
  expect(ok: boolean, check: string, detail: () => string, clients: number[]): boolean {
    if (ok) this.passed++;
    else {
      const failure = { check, detail: detail(), clients, atMs: Date.now() - this.started };
      // The first failure of each check is printed at once: a long run shows its findings as it goes.
      if (this.printFirst && !this.failures.some((f) => f.check === check)) console.log(`  FAILED at ${(failure.atMs / 1000).toFixed(1)} s: ${check}: ${failure.detail}`);
      this.failures.push(failure);
    }
    return ok;
  }

  trace(client: number, line: string): void {
    const lines = this.traces.get(client) ?? [];
    lines.push(`${((Date.now() - this.started) / 1000).toFixed(1).padStart(6)}s ${line}`);
    if (lines.length > TRACE_LINES) lines.shift();
    this.traces.set(client, lines);
  }

  lastOps(client: number): string[] { return this.traces.get(client) ?? []; }
}
