// The reconciliation schedule: every check, each partner's previous UTC day is reconciled
// against its statement if no scheduled report of that day exists yet. The unique index on
// scheduled reports makes several processes running the schedule reconcile a day once; a day a
// partner could not be reached is tried again at the next check.
import { setTimeout as sleep } from 'node:timers/promises';
import { log } from '../log';
import { PARTNER_SLUGS } from '../partners/registry';
import type { Runtime } from '../runtime';
import type { Reconciliations } from './reconciliations';
import { addDays } from './settlement';

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

  /** Reconciles yesterday (UTC) for every partner that has no scheduled report of it. */
  async check(now = new Date()): Promise<void> {
    const day = addDays(now.toISOString().slice(0, 10), -1);
    const done = new Set((await this.runtime.db('reconciliations').where({ trigger: 'schedule', from_date: day }).select('partner')).map((r: { partner: string }) => r.partner));
    for (const partner of PARTNER_SLUGS.filter((p) => !done.has(p))) {
      if (this.stopped) return;
      try {
        const report = await this.reconciliations.run({
          partner, from: day, to: day, dryRun: false, amountTolerance: '0', dateToleranceDays: 1, statementCsv: null, trigger: 'schedule',
        });
        if (report) log.info({ partner, day, summary: report.summary }, 'scheduled reconciliation completed');
      } catch (error) {
        log.warn({ err: error, partner, day }, 'scheduled reconciliation failed; the next check retries');
      }
    }
  }
}
