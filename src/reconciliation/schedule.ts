// The reconciliation schedule: every check, each partner's days are reconciled against its
// statement, one scheduled report per UTC day, from the day after its last scheduled report up to
// yesterday: a day missed (the service down, the partner unreachable) is filled in at the next
// check rather than skipped. A partner never reconciled on schedule starts with yesterday; at
// most CATCH_UP_DAYS_MAX days are filled in, the latest ones. The unique index on scheduled
// reports makes several processes running the schedule reconcile a day once; a day a partner
// could not be reached stops that partner's check, and the next check tries it again.
import { setTimeout as sleep } from 'node:timers/promises';
import { log } from '../log';
import { PARTNER_SLUGS, type PartnerSlug } from '../partners/registry';
import type { Runtime } from '../runtime';
import type { Reconciliations } from './reports';
import { addDays, daysOf } from './partner-statements';
import { wallNow } from '../clock';

/** How far back the schedule fills in: the statements partners keep, and a bound on one check's work. */
export const CATCH_UP_DAYS_MAX = 31;

export class ReconciliationSchedule {
  private stopped = false;
  private loop: Promise<void> | null = null;
  private readonly wake = new AbortController();

  constructor(private readonly runtime: Runtime, private readonly reconciliations: Reconciliations, private readonly checkMs: number) {}

  start(): void {
    this.loop = (async () => {
      while (!this.stopped) {
        await this.check().catch((error) => log.warn({ err: error }, 'a reconciliation check failed; the next one retries'));
        await sleep(this.checkMs, undefined, { signal: this.wake.signal }).catch(() => undefined);
      }
    })();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.wake.abort();
    await this.loop;
  }

  /** The days each partner is due, oldest first: after its last scheduled report, up to yesterday (UTC). */
  async dueDays(now = wallNow()): Promise<Map<string, string[]>> {
    const yesterday = addDays(now.toISOString().slice(0, 10), -1);
    const { rows }: { rows: Array<{ partner: string; last: string }> } = await this.runtime.db.raw(
      `SELECT partner, to_char(max(to_date), 'YYYY-MM-DD') AS last FROM reconciliations WHERE trigger = 'schedule' GROUP BY partner`);
    const last = new Map(rows.map((row) => [row.partner, row.last]));
    const earliest = addDays(yesterday, -(CATCH_UP_DAYS_MAX - 1));
    return new Map(PARTNER_SLUGS.map((partner) => {
      const after = last.get(partner);
      const first = after === undefined ? yesterday : addDays(after, 1);
      return [partner, first > yesterday ? [] : daysOf(first < earliest ? earliest : first, yesterday)];
    }));
  }

  /** Reconciles every due day of every partner, oldest first. */
  async check(now = wallNow()): Promise<void> {
    for (const [partner, days] of await this.dueDays(now)) {
      for (const day of days) {
        if (this.stopped) return;
        try {
          const report = await this.reconciliations.run({
            partner: partner as PartnerSlug, from: day, to: day, dryRun: false, amountTolerance: '0', dateToleranceDays: 1, statementCsv: null, trigger: 'schedule',
          });
          if (report) log.info({ partner, day, summary: report.summary }, 'scheduled reconciliation completed');
        } catch (error) {
          log.warn({ err: error, partner, day }, 'scheduled reconciliation failed; the next check retries');
          break; // the later days wait for this one, so the days stay filled in order
        }
      }
    }
  }
}
