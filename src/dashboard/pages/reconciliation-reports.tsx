// Reconciliation reports (master key): run one for a partner and a day, list the stored ones, and
// read one: each category's count, the totals per currency, the unmatched items by category, and
// every item (the matched ones too) as CSV.
import { useState } from 'preact/hooks';
import { api, downloadCsv } from '../api';
import { Field, FormError, Section, Select, useSubmit } from '../forms';
import { FitTable, usePaged, When } from '../lists';

interface Item { category: string; statement_line_id: string | null; ledger_entry_id: string | null; reference: string | null; currency: string; ledger_amount: string | null; statement_amount: string | null; reason: string }
interface Report {
  id: string; partner: string; from: string; to: string; created_at: string; dry_run: boolean;
  summary: Record<string, number>;
  totals: Array<{ currency: string; ledger: string; statement: string; matched: string; difference: string }>;
  exceptions: { opened: number; resolved: number };
  items: Item[]; items_omitted: number;
}
const PARTNERS = ['openbank', 'claimless', 'fiat', 'chain'];
const UNMATCHED = ['ledger_only', 'statement_only', 'mismatched', 'ambiguous', 'batch'];
/** The unmatched categories of a report in this order, then any other its summary counts. */
const unmatchedOf = (summary: Record<string, number>) => [...UNMATCHED, ...Object.keys(summary).filter((c) => c !== 'matched' && !UNMATCHED.includes(c))];
const unmatchedCount = (summary: Record<string, number>) => unmatchedOf(summary).reduce((sum, c) => sum + (summary[c] ?? 0), 0);
const yesterday = () => new Date(Date.now() - 86_400_000).toISOString().slice(0, 10);

export function Reconciliations({ master }: { master: string }) {
  const [runs, setRuns] = useState(0);
  const [shown, setShown] = useState<Report | null>(null);
  const [form, setForm] = useState({ partner: 'openbank', day: yesterday() });
  const run = useSubmit((details) => (details === 'from' || details === 'to' ? 'day' : details));
  const open = useSubmit(() => null);
  const { page, error, pager } = usePaged<Report>('/v1/reconciliations', {}, runs, { credential: master });
  return (
    <>
      <Section title="Reconciliations">
        <form onSubmit={(e) => {
          e.preventDefault();
          void run.submit(async () => {
            setShown(await api<Report>('POST', '/v1/reconciliations', { partner: form.partner, from: form.day, to: form.day }, { credential: master }));
            setRuns((n) => n + 1);
          });
        }}>
          <FormError message={run.errors.form ?? run.errors.fields.partner} />
          <Select label="Partner to reconcile" name="recon-partner" value={form.partner} options={PARTNERS} onInput={(partner) => setForm({ ...form, partner })} />
          <Field label="Day to reconcile" name="recon-day" type="date" value={form.day} onInput={(day) => setForm({ ...form, day })} error={run.errors.fields.day} />
          <button type="submit" disabled={run.busy}>Reconcile</button>
        </form>
        <FormError message={error ?? open.errors.form} />
        {page === null ? <p>Loading…</p> : page.data.length === 0 ? <p>No reports yet.</p> : (
          <FitTable label="Reconciliation reports list" columns={['Partner', 'Days', 'Matched', 'Exceptions', 'Run', { hidden: 'Report' }]} rows={page.data.map((r) => ({
            key: r.id,
            cells: [
              r.partner, r.from === r.to ? r.from : `${r.from} to ${r.to}`, r.summary.matched,
              unmatchedCount(r.summary), <When at={r.created_at} />,
              <button type="button" class="link" aria-label={`Open the ${r.partner} report of ${r.from}`} onClick={() => void open.submit(async () => setShown(await api<Report>('GET', `/v1/reconciliations/${r.id}`, undefined, { credential: master })))}>Open</button>,
            ],
          }))} />
        )}
        {pager}
      </Section>
      {shown ? <ReportView report={shown} master={master} /> : null}
    </>
  );
}

function ReportView({ report, master }: { report: Report; master: string }) {
  const download = useSubmit(() => null);
  return (
    <Section title={`Report: ${report.partner}, ${report.from === report.to ? report.from : `${report.from} to ${report.to}`}`}>
      <ul class="summary" aria-label="Items by category">
        {['matched', ...unmatchedOf(report.summary)].map((category) => <li key={category}><span class="event-type">{category}</span> <strong data-testid={`count-${category}`}>{report.summary[category] ?? 0}</strong></li>)}
      </ul>
      <p>Exceptions opened {report.exceptions.opened}, resolved by this run {report.exceptions.resolved}.</p>
      <FitTable label="Totals per currency" columns={['Currency', 'Ledger', 'Statement', 'Matched', 'Difference']} rows={report.totals.map((t) => ({
        key: t.currency, heading: true,
        cells: [t.currency, <span class="amount">{t.ledger}</span>, <span class="amount">{t.statement}</span>, <span class="amount">{t.matched}</span>, <span class="amount">{t.difference}</span>],
      }))} />
      {unmatchedOf(report.summary).map((category) => {
        const items = report.items.filter((item) => item.category === category);
        return items.length === 0 ? null : (
          <div key={category}>
            <h3>{category} ({items.length})</h3>
            <ul class="items">
              {items.map((item) => (
                <li key={`${item.statement_line_id}-${item.ledger_entry_id}`}>
                  <code>{item.reference ?? item.statement_line_id ?? item.ledger_entry_id}</code>: ledger {item.ledger_amount ?? '—'}, statement {item.statement_amount ?? '—'} {item.currency}. {item.reason}
                </li>
              ))}
            </ul>
          </div>
        );
      })}
      {report.items_omitted > 0 ? <p class="hint">{report.items_omitted} more unmatched items are in the CSV.</p> : null}
      <FormError message={download.errors.form} />
      {report.dry_run ? null : (
        <button type="button" disabled={download.busy} onClick={() => void download.submit(() => downloadCsv(`/v1/reconciliations/${report.id}`, `reconciliation-${report.partner}-${report.from}.csv`, { credential: master }))}>Download every item (CSV)</button>
      )}
    </Section>
  );
}
