// Transfers: send one (its status follows the account's events live, from pending to
// completed) or schedule it (scheduled-transfers.tsx), many at once from a CSV file, the
// scheduled ones with each run's outcome, and the account's transfers, filtered by status,
// currency, UTC days (from, to: that day included) and recipient, a page at a time; a transfer's
// details, with its metadata (changed key by key), its reversals and a form to reverse it in part
// or in full.
import { useEffect, useRef, useState } from 'preact/hooks';
import { api, ledgerWrite, RetryKeys } from '../api';
import type { DomainEvent } from '../events';
import { Field, FormError, Section, Select, useSubmit } from '../forms';
import { CURRENCIES } from './overview';
import { ScrollTable, useFetched, type StatusChange, StatusHistory, usePaged, When } from '../lists';
import { MetadataEditor } from './metadata-editor';
import { isScheduled, NO_SCHEDULE, schedule, ScheduledList, scheduleFieldOf, ScheduleFields, type ScheduledTransfer } from './scheduled-transfers';
import { TransferBatches } from './transfer-batches';

interface Transfer { transfer_id: string; status: string; amount: string; currency: string; type: string; created_at: string; recipient?: { email?: string } | null }
const STATUSES = ['all', 'pending', 'quoting', 'executing', 'completed', 'failed', 'rolled_back'];
const FINAL = new Set(['completed', 'failed', 'rolled_back']);
const ANY_CURRENCY = [{ value: '', label: 'Any currency' }, ...CURRENCIES];

interface ListFilters { status: string; currency: string; from: string; to: string; recipient: string }

/**
 * The filters as GET /v1/transfers takes them: days as the dates the inputs give (a date in `to`
 * includes its day); the recipient once it reads as an address, so typing one asks for nothing
 * the API would refuse.
 */
function queryOf(filters: ListFilters): Record<string, string | undefined> {
  const recipient = filters.recipient.trim();
  return {
    status: filters.status === 'all' ? undefined : filters.status, currency: filters.currency || undefined,
    from: filters.from || undefined, to: filters.to || undefined,
    recipient_email: /^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(recipient) ? recipient : undefined,
  };
}

/**
 * The API names the body's fields (under `transfer.` when scheduling); the form names them the
 * same but for the recipient and the schedule's own.
 */
function fieldOf(details: string | null): string | null {
  const field = details?.startsWith('transfer.') ? details.slice('transfer.'.length) : details;
  return field === 'recipient_email' ? 'email' : scheduleFieldOf(field) ?? field;
}

export function Transfers({ events }: { events: DomainEvent[] }) {
  const [form, setForm] = useState({ email: '', amount: '', currency: 'USD' });
  const [when, setWhen] = useState(NO_SCHEDULE);
  const [sent, setSent] = useState<Transfer | null>(null);
  const [scheduled, setScheduled] = useState<ScheduledTransfer | null>(null);
  const [batches, setBatches] = useState(0);
  const send = useSubmit(fieldOf);
  const scheduleKeys = useRef(new RetryKeys());
  const set = (name: keyof typeof form) => (value: string) => setForm({ ...form, [name]: value });
  // The latest event about the transfer just sent says its status now; while it is not final the
  // transfer is also read again each second, so a dropped event stream cannot leave it pending.
  const latest = sent ? events.find((e) => e.resource_type === 'transfer' && e.resource_id === sent.transfer_id) : undefined;
  const status = sent && FINAL.has(sent.status) ? sent.status : latest?.data.status ?? sent?.status;
  useEffect(() => {
    if (!sent || !status || FINAL.has(status)) return undefined;
    const timer = setTimeout(() => { void api<Transfer>('GET', `/v1/transfers/${sent.transfer_id}`).then(setSent, () => undefined); }, 1000);
    return () => clearTimeout(timer);
  }, [sent, status]);
  return (
    <>
      <Section title="Send">
        <form onSubmit={(e) => {
          e.preventDefault();
          void send.submit(async () => {
            const transfer = { recipient_email: form.email, amount: form.amount, currency: form.currency };
            if (!isScheduled(when)) {
              setSent(await api<Transfer>('POST', '/v1/transfers', transfer));
              setScheduled(null);
              return;
            }
            setScheduled(await schedule(scheduleKeys.current, transfer, when));
            setSent(null);
            setWhen(NO_SCHEDULE);
          });
        }}>
          <FormError message={send.errors.form} />
          <Field label="Recipient email" name="email" type="email" value={form.email} onInput={set('email')} error={send.errors.fields.email} />
          <Field label="Amount" name="amount" inputMode="decimal" value={form.amount} onInput={set('amount')} error={send.errors.fields.amount} />
          <Select label="Currency" name="currency" value={form.currency} options={CURRENCIES} onInput={set('currency')} />
          <ScheduleFields choice={when} onChange={setWhen} errors={send.errors.fields} />
          <button type="submit" disabled={send.busy}>{isScheduled(when) ? 'Schedule' : 'Send'}</button>
        </form>
        {sent ? <p role="status" class="result">Transfer of {sent.amount} {sent.currency}: <strong data-testid="sent-status">{status}</strong></p> : null}
        {scheduled ? (
          <p role="status" class="result">Scheduled {scheduled.transfer.amount} {scheduled.transfer.currency}: first run <When at={scheduled.run_at} />{scheduled.repeat ? `, ${scheduled.repeat.count} runs` : ''}.</p>
        ) : null}
      </Section>
      <ScheduledList events={events} made={scheduled?.id ?? ''} />
      <TransferBatches onCreated={() => setBatches((n) => n + 1)} />
      <TransferList refreshOn={events.filter((e) => e.resource_type === 'transfer').length + batches} />
    </>
  );
}

function TransferList({ refreshOn }: { refreshOn: number }) {
  const [filters, setFilters] = useState<ListFilters>({ status: 'all', currency: '', from: '', to: '', recipient: '' });
  const [shown, setShown] = useState<string | null>(null);
  const { page, error, pager } = usePaged<Transfer>('/v1/transfers', queryOf(filters), refreshOn);
  const set = (name: keyof ListFilters) => (value: string) => setFilters({ ...filters, [name]: value });
  const filtered = Object.values(queryOf(filters)).some((value) => value !== undefined);
  return (
    <>
      <Section title="Transfers">
        <div class="filters" role="group" aria-label="Filter the transfers">
          <Select label="Status" name="status-filter" value={filters.status} options={STATUSES} onInput={set('status')} />
          <Select label="Currency" name="transfers-currency" value={filters.currency} options={ANY_CURRENCY} onInput={set('currency')} />
          <Field label="From (UTC day)" name="transfers-from" type="date" required={false} value={filters.from} onInput={set('from')} />
          <Field label="To (UTC day)" name="transfers-to" type="date" required={false} value={filters.to} onInput={set('to')} />
          <Field label="Sent to (email)" name="transfers-recipient" type="email" required={false} autoComplete="off" value={filters.recipient} onInput={set('recipient')} />
        </div>
        <FormError message={error} />
        {page === null ? <p>Loading…</p> : page.data.length === 0 ? <p>{filtered ? 'No transfers match these filters.' : 'No transfers yet.'}</p> : (
          <ScrollTable label="Transfers list" columns={['Created', 'Recipient', 'Amount', 'Status', { hidden: 'Details' }]}>{page.data.map((t) => (
                <tr key={t.transfer_id}>
                  <td><When at={t.created_at} /></td>
                  <td>{t.recipient?.email ?? t.type}</td><td class="amount">{t.amount} {t.currency}</td><td>{t.status}</td>
                  <td><button type="button" class="link" aria-label={`Details of the transfer of ${t.amount} ${t.currency} created ${new Date(t.created_at).toLocaleString()}`} onClick={() => setShown(t.transfer_id)}>Details</button></td>
                </tr>
              ))}</ScrollTable>
        )}
        {pager}
      </Section>
      {shown ? <TransferDetail id={shown} refreshOn={refreshOn} /> : null}
    </>
  );
}

interface TransferWithHistory extends Transfer {
  status_history: StatusChange[]; failure: { code: string; message: string } | null; note: string | null; reversed_amount: string; metadata: Record<string, string>;
}
interface Reversal {
  id: string; amount: string; currency: string; status: 'pending' | 'completed' | 'failed'; reason: string | null; created_at: string;
  payout: { amount: string; currency: string } | null; failure: { code: string; message: string | null } | null;
}

/** A reversal in words: given back, on its way back through the partner (the payee's part, when converted), or why the partner did not return it. */
function reversalWords(r: Reversal): string {
  const part = r.payout && r.payout.currency !== r.currency ? ` (${r.payout.amount} ${r.payout.currency} from the recipient)` : '';
  if (r.status === 'pending') return `being returned by the partner${part}`;
  if (r.status === 'failed') return `not returned: ${r.failure?.message ?? r.failure?.code ?? 'the partner did not return it'}`;
  return `given back${part}`;
}

function TransferDetail({ id, refreshOn }: { id: string; refreshOn: number }) {
  const [changed, setChanged] = useState(0);
  const transfer = useFetched<TransferWithHistory>(`/v1/transfers/${id}`, refreshOn + changed);
  const reversals = useFetched<{ data: Reversal[] }>(`/v1/transfers/${id}/reversals`, refreshOn + changed);
  return (
    <Section title="Transfer details">
      {transfer === null ? <p>Loading…</p> : (
        <>
          <dl class="facts">
            <dt>Id</dt><dd><code>{transfer.transfer_id}</code></dd>
            <dt>Amount</dt><dd class="amount">{transfer.amount} {transfer.currency}</dd>
            <dt>Recipient</dt><dd>{transfer.recipient?.email ?? transfer.type}</dd>
            <dt>Status</dt><dd>{transfer.status}</dd>
            {transfer.failure ? <><dt>Failure</dt><dd>{transfer.failure.message}</dd></> : null}
          </dl>
          <MetadataEditor path={`/v1/transfers/${transfer.transfer_id}`} metadata={transfer.metadata} what="transfer" onChanged={() => setChanged((n) => n + 1)} />
          <h3>Status history</h3>
          <StatusHistory history={transfer.status_history} />
          <h3>Reversals</h3>
          {reversals && reversals.data.length > 0 ? (
            <ul class="reversals">
              {reversals.data.map((r) => <li key={r.id}><span class="amount">{r.amount} {r.currency}</span> {reversalWords(r)} <When at={r.created_at} />{r.reason ? `: ${r.reason}` : ''}</li>)}
            </ul>
          ) : <p>None: {transfer.reversed_amount} {transfer.currency} given back.</p>}
          {transfer.status === 'completed' ? <ReverseForm transfer={transfer} onDone={() => setChanged((n) => n + 1)} /> : null}
        </>
      )}
    </Section>
  );
}

/**
 * Gives back part or all of what is left of a completed transfer (empty amount: all of it): at once
 * between two accounts of the service, through the partner for a transfer it paid out (pending
 * until the partner answers; the list above follows it by the transfer's events).
 */
function ReverseForm({ transfer, onDone }: { transfer: TransferWithHistory; onDone: () => void }) {
  const [form, setForm] = useState({ amount: '', reason: '' });
  const [done, setDone] = useState<string | null>(null);
  const keys = useRef(new RetryKeys());
  const reverse = useSubmit((details) => ({ amount: 'amount', reason: 'reason' })[details ?? ''] ?? null);
  return (
    <form aria-labelledby="reverse-heading" onSubmit={(e) => {
      e.preventDefault();
      void reverse.submit(async () => {
        const body = { ...(form.amount.trim() ? { amount: form.amount.trim() } : {}), ...(form.reason.trim() ? { reason: form.reason.trim() } : {}) };
        const reversal = await ledgerWrite<Reversal>(keys.current, `/v1/transfers/${transfer.transfer_id}/reversals`, body);
        setDone(reversal.status === 'pending'
          ? `Asked the partner to return ${reversal.amount} ${reversal.currency}: pending until it answers.`
          : `Reversed: ${reversal.amount} ${reversal.currency} given back to you.`);
        setForm({ amount: '', reason: '' });
        onDone();
      });
    }}>
      <h3 id="reverse-heading">Reverse</h3>
      <FormError message={reverse.errors.form} />
      <Field label="Amount to give back (empty: all that is left)" name="reverse-amount" inputMode="decimal" value={form.amount} onInput={(value) => setForm({ ...form, amount: value })} error={reverse.errors.fields.amount} required={false} />
      <Field label="Reason" name="reverse-reason" value={form.reason} onInput={(value) => setForm({ ...form, reason: value })} error={reverse.errors.fields.reason} required={false} />
      <p><button type="submit" disabled={reverse.busy}>Reverse</button></p>
      {done ? <p role="status" class="result">{done}</p> : null}
    </form>
  );
}
