// What one client's adversarial inputs (a batch of hundreds of items, a flood of alerts) cost the
// others: every request's latency is recorded with its client and start, and so is each window in
// which a client sent such an input or a fault was under way. At the end the other clients' p99
// while an adversarial input ran (and no fault did) is compared with their p99 when neither ran:
// it may be higher, but bounded.
export interface Window { client: number; from: number; to: number }

/** A client's p99 may grow this much while another's adversarial input runs (and never need be under the floor). */
export const P99_FACTOR = 3;
export const P99_FLOOR_MS = 2_000;
const MIN_SAMPLES = 50;

export class Latencies {
  private readonly requests: Array<{ client: number; at: number; ms: number }> = [];
  readonly adversarial: Window[] = [];
  readonly faults: Window[] = [];

  record(client: number, at: number, ms: number): void { this.requests.push({ client, at, ms }); }

  /** Runs `work` as an adversarial input of `client`, its window recorded. */
  async adversary<T>(client: number, work: () => Promise<T>): Promise<T> {
    const window = { client, from: Date.now(), to: Number.POSITIVE_INFINITY };
    this.adversarial.push(window);
    try { return await work(); } finally { window.to = Date.now(); }
  }

  /** The other clients' p99 during adversarial inputs and apart from them, outside faults; null where too few requests. */
  summary(): { during: number | null; apart: number | null; samples: [number, number] } {
    const inside = (at: number, windows: Window[], client?: number) => windows.some((w) => at >= w.from && at <= w.to && (client === undefined || w.client !== client));
    const quiet = this.requests.filter((r) => !inside(r.at, this.faults));
    const during = quiet.filter((r) => inside(r.at, this.adversarial, r.client)).map((r) => r.ms);
    const apart = quiet.filter((r) => !inside(r.at, this.adversarial)).map((r) => r.ms);
    return { during: p99(during), apart: p99(apart), samples: [during.length, apart.length] };
  }
}

function p99(values: number[]): number | null {
  if (values.length < MIN_SAMPLES) return null;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil(sorted.length * 0.99) - 1)];
}
