// The reconciliation exceptions queue (master key, like the reports it comes from): filtered by
// partner, status, the UTC day it was raised and its kind, a page at a time, oldest first, and
// the same as CSV; opening one shows it whole and resolves it (exception-detail.tsx). A
// resolution refreshes the list.
import { useRef, useState } from 'preact/hooks';
import { downloadCsv } from '../api';
import { Field, FormError, Section, Select, useSubmit } from '../forms';
import { FitTable, usePaged, When } from '../lists';
import { ExceptionDetail, type Exception } from './exception-detail';

const PARTNERS = ['openbank', 'claimless', 'fiat', 'chain'];
const STATUSES = ['open', 'resolving', 'resolved'];
const KINDS = ['ledger_only', 'statement_only', 'mismatched', 'ambiguous', 'batch', 'late_completion'];
const any = (what: string, values: string[]) => [{ value: '', label: what }, ...values];
const DAY_MS = 86_400_000;

/**
 * The filters as the list route takes them. A day is a UTC calendar day: sent as the instants
 * that bound it (its midnight and the next), which every version of the route reads as that day.
 */
function queryOf(filters: { partner: string; status: string; day: string; category: string }): Record<string, string | undefined> {
  const day = /^\d{4}-\d{2}-\d{2}$/.test(filters.day) ? Date.parse(`${filters.day}T00:00:00Z`) : NaN;
  return {
    partner: filters.partner || undefined, status: filters.status || undefined, category: filters.category || undefined,
    from: Number.isNaN(day) ? undefined : new Date(day).toISOString(), to: Number.isNaN(day) ? undefined : new Date(day + DAY_MS).toISOString(),
  };
}

/** The two sides' amounts in a row of the list, each kept whole, the row free to wrap between them. */
function amounts(e: Exception) {
  const sides = [e.ledger_amount === null ? null : `ledger ${e.ledger_amount}`, e.statement_amount === null ? null : `statement ${e.statement_amount}`]
    .filter((side): side is string => side !== null).map((side, i, all) => (i === all.length - 1 ? `${side} ${e.currency}` : `${side},`));
  return sides.length === 0 ? e.currency : <>{sides.map((side, i) => <>{i > 0 ? ' ' : ''}<span class="amount">{side}</span></>)}</>;
}

export function ExceptionsQueue({ master }: { master: string }) {
  const [filters, setFilters] = useState({ partner: '', status: 'open', day: '', category: '' });
  const [resolved, setResolved] = useState(0);
  const [shown, setShown] = useState<string | null>(null);
  // Leaving an exception takes the reader back to the button that opened it.
  const opener = useRef<HTMLElement | null>(null);
  const close = () => {
    setShown(null);
    setTimeout(() => { if (opener.current?.isConnected) opener.current.focus(); }, 0);
  };
  const { page, error, pager } = usePaged<Exception>('/v1/reconciliation-exceptions', queryOf(filters), resolved, { credential: master });
  const set = (name: keyof typeof filters) => (value: string) => setFilters({ ...filters, [name]: value });
  const download = useSubmit(() => null);
  const csvQuery = new URLSearchParams(Object.entries(queryOf(filters)).filter((entry): entry is [string, string] => entry[1] !== undefined)).toString();
  return (
    <>
      <Section title="Exceptions" wide>
        <p class="hint">What reconciliation could not match, oldest first. Open one to see both sides and resolve it.</p>
        <div class="filters" role="group" aria-label="Filter the exceptions">
          <Select label="Exception partner" name="exception-partner" value={filters.partner} options={any('Any partner', PARTNERS)} onInput={set('partner')} />
          <Select label="Exception status" name="exception-status" value={filters.status} options={any('Any status', STATUSES)} onInput={set('status')} />
          <Select label="Exception kind" name="exception-kind" value={filters.category} options={any('Any kind', KINDS)} onInput={set('category')} />
          <Field label="Raised on (UTC day)" name="exception-day" type="date" required={false} value={filters.day} onInput={set('day')} />
        </div>
        <FormError message={error ?? download.errors.form} />
        {page === null ? <p>Loading…</p> : page.data.length === 0 ? <p>No exceptions match these filters.</p> : (
          <FitTable label="Exceptions list" columns={['Raised', 'Partner', 'Kind', 'Reference', 'Amounts', 'Status', { hidden: 'Exception' }]} rows={page.data.map((e) => ({
            key: e.id,
            cells: [
              <When at={e.created_at} />, e.partner, e.category, <code>{e.reference ?? e.statement_line_id ?? '—'}</code>, amounts(e),
              e.status === 'resolved' && e.resolution ? `resolved (${e.resolution})` : e.status,
              <button type="button" class="link" aria-pressed={shown === e.id} aria-label={`Open the ${e.category} exception ${e.reference ?? e.statement_line_id ?? e.id}`} onClick={(event) => { opener.current = event.currentTarget; setShown(e.id); }}>Open</button>,
            ],
          }))} />
        )}
        {pager}
        <p><button type="button" disabled={download.busy} onClick={() => void download.submit(() => downloadCsv(`/v1/reconciliation-exceptions${csvQuery ? `?${csvQuery}` : ''}`,
          `reconciliation-exceptions${filters.day ? `-${filters.day}` : ''}.csv`, { credential: master }))}>Download these exceptions (CSV)</button></p>
      </Section>
      {shown ? <ExceptionDetail key={shown} id={shown} master={master} onResolved={() => setResolved((n) => n + 1)} onClose={close} /> : null}
    </>
  );
}
