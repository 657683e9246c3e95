// Finance: the account's statement in one currency (and its CSV), and, with the operator's master
// key (kept in this page's memory only, never stored), the ledger's trial balance, the
// reconciliation reports with each category's items, and the queue of exceptions to resolve.
// Every table fits its card, at 1280 px as on a phone (FitTable).
import { useState } from 'preact/hooks';
import { api, downloadCsv } from '../api';
import { Field, FormError, Section, Select, useSubmit } from '../forms';
import { FitTable, When } from '../lists';
import { CURRENCIES } from './overview';
import { ExceptionsQueue } from './exceptions';
import { Reconciliations } from './reconciliation-reports';

interface StatementLine { entry_id: string; posted_at: string; amount: string; balance_after: string; kind: string; description: string }
interface Statement { currency: string; from: string; to: string; opening_balance: string; closing_balance: string; lines: StatementLine[] }
interface TrialBalance { at: string; accounts: Array<{ ledger_account: string; account_id: string | null; currency: string; debits: string; credits: string; net: string }>; totals: Array<{ currency: string; debits: string; credits: string; net: string }> }

const isoDay = (at: Date) => at.toISOString().slice(0, 10);
const DAY_MS = 86_400_000;
/** The statement route takes instants; a person picks days, both inclusive. */
function statementQuery(currency: string, fromDay: string, toDay: string): string {
  const to = /^\d{4}-\d{2}-\d{2}$/.test(toDay) ? isoDay(new Date(Date.parse(toDay) + DAY_MS)) : toDay;
  return new URLSearchParams({ currency, from: fromDay, to }).toString();
}

export function Finance() {
  const [master, setMaster] = useState('');
  return (
    <>
      <StatementSection />
      <Section title="Operator access">
        <p class="hint">The trial balance, the reconciliation reports and their exceptions cover the whole ledger: they take the master key. It stays in this page's memory and is forgotten on sign out or reload.</p>
        <Field label="Master key" name="master-key" type="password" autoComplete="off" required={false} value={master} onInput={setMaster} />
      </Section>
      {master ? <TrialBalanceSection master={master} /> : null}
      {master ? <Reconciliations master={master} /> : null}
      {master ? <ExceptionsQueue master={master} /> : null}
    </>
  );
}

function StatementSection() {
  const today = new Date();
  const [form, setForm] = useState({ currency: 'USD', from: isoDay(new Date(today.getTime() - 30 * DAY_MS)), to: isoDay(today) });
  const [statement, setStatement] = useState<Statement | null>(null);
  const show = useSubmit();
  const download = useSubmit(() => null);
  const set = (name: keyof typeof form) => (value: string) => setForm({ ...form, [name]: value });
  const query = statementQuery(form.currency, form.from, form.to);
  return (
    <Section title="Statement">
      <form onSubmit={(e) => { e.preventDefault(); void show.submit(async () => setStatement(await api<Statement>('GET', `/v1/accounts/me/statement?${query}`))); }}>
        <FormError message={show.errors.form ?? download.errors.form} />
        <Select label="Statement currency" name="statement-currency" value={form.currency} options={CURRENCIES} onInput={set('currency')} />
        <Field label="From (day, inclusive)" name="statement-from" type="date" value={form.from} onInput={set('from')} error={show.errors.fields.from} />
        <Field label="To (day, inclusive)" name="statement-to" type="date" value={form.to} onInput={set('to')} error={show.errors.fields.to} />
        <div class="toolbar">
          <button type="submit" disabled={show.busy}>Show statement</button>
          <button type="button" disabled={download.busy} onClick={() => void download.submit(() => downloadCsv(`/v1/accounts/me/statement?${query}`, `statement-${form.currency}-${form.from}-${form.to}.csv`))}>Download CSV</button>
        </div>
      </form>
      {statement ? (
        <>
          <p>Opening balance <strong class="amount">{statement.opening_balance} {statement.currency}</strong>, closing balance <strong class="amount" data-testid="closing-balance">{statement.closing_balance} {statement.currency}</strong>.</p>
          {statement.lines.length === 0 ? <p>No movements in these days.</p> : (
            <FitTable label="Statement lines" columns={['Posted', 'Description', 'Amount', 'Balance']} rows={statement.lines.map((line) => ({
              key: line.entry_id, cells: [<When at={line.posted_at} />, line.description, <span class="amount">{line.amount}</span>, <span class="amount">{line.balance_after}</span>],
            }))} />
          )}
        </>
      ) : null}
    </Section>
  );
}

function TrialBalanceSection({ master }: { master: string }) {
  const [balance, setBalance] = useState<TrialBalance | null>(null);
  const load = useSubmit(() => null);
  const system = balance?.accounts.filter((a) => a.account_id === null) ?? [];
  return (
    <Section title="Trial balance">
      <button type="button" disabled={load.busy} onClick={() => void load.submit(async () => setBalance(await api<TrialBalance>('GET', '/v1/ledger/trial-balance', undefined, { credential: master })))}>Show trial balance</button>
      <FormError message={load.errors.form} />
      {balance ? (
        <>
          <p>At <When at={balance.at} />, over {balance.accounts.length} ledger accounts: {balance.totals.every((t) => t.debits === t.credits) ? 'debits equal credits in every currency.' : 'debits and credits differ: see the totals.'}</p>
          <FitTable label="Trial balance totals" columns={['Currency', 'Debits', 'Credits', 'Net']} rows={balance.totals.map((t) => ({
            key: t.currency, heading: true, cells: [t.currency, <span class="amount">{t.debits}</span>, <span class="amount">{t.credits}</span>, <span class="amount">{t.net}</span>],
          }))} />
          <details>
            <summary>The service's own accounts ({system.length})</summary>
            <FitTable label="The service's own accounts" columns={['Ledger account', 'Debits', 'Credits', 'Net']} rows={system.map((a) => ({
              key: a.ledger_account, cells: [<code>{a.ledger_account}</code>, <span class="amount">{a.debits}</span>, <span class="amount">{a.credits}</span>, <span class="amount">{a.net} {a.currency}</span>],
            }))} />
          </details>
        </>
      ) : null}
    </Section>
  );
}
