// Transfers: send one (its status follows the account's events live, from pending to
// completed), and the account's transfers, filtered by status, a page at a time.
import { useEffect, useState } from 'preact/hooks';
import { api } from '../api';
import type { DomainEvent } from '../events';
import { Field, FormError, Section, Select, useSubmit } from '../forms';
import { CURRENCIES } from './overview';

interface Transfer { transfer_id: string; status: string; amount: string; currency: string; type: string; created_at: string; recipient?: { email?: string } | null }
interface Page { data: Transfer[]; has_more: boolean; next_cursor: string | null }
const STATUSES = ['all', 'pending', 'quoting', 'executing', 'completed', 'failed', 'rolled_back'];

/** The API names the body's fields; the form names them the same but for the recipient. */
const fieldOf = (details: string | null) => (details === 'recipient_email' ? 'email' : details);

export function Transfers({ events }: { events: DomainEvent[] }) {
  const [form, setForm] = useState({ email: '', amount: '', currency: 'USD' });
  const [sent, setSent] = useState<Transfer | null>(null);
  const send = useSubmit(fieldOf);
  const set = (name: keyof typeof form) => (value: string) => setForm({ ...form, [name]: value });
  // The latest event about the transfer just sent says its status now.
  const latest = sent ? events.find((e) => e.resource_type === 'transfer' && e.resource_id === sent.transfer_id) : undefined;
  const status = latest?.data.status ?? sent?.status;
  return (
    <>
      <Section title="Send">
        <form onSubmit={(e) => {
          e.preventDefault();
          void send.submit(async () => {
            setSent(await api<Transfer>('POST', '/v1/transfers', { recipient_email: form.email, amount: form.amount, currency: form.currency }));
          });
        }}>
          <FormError message={send.errors.form} />
          <Field label="Recipient email" name="email" type="email" value={form.email} onInput={set('email')} error={send.errors.fields.email} />
          <Field label="Amount" name="amount" inputMode="decimal" value={form.amount} onInput={set('amount')} error={send.errors.fields.amount} />
          <Select label="Currency" name="currency" value={form.currency} options={CURRENCIES} onInput={set('currency')} />
          <button type="submit" disabled={send.busy}>Send</button>
        </form>
        {sent ? <p role="status" class="result">Transfer of {sent.amount} {sent.currency}: <strong data-testid="sent-status">{status}</strong></p> : null}
      </Section>
      <TransferList refreshOn={events.filter((e) => e.resource_type === 'transfer').length} />
    </>
  );
}

function TransferList({ refreshOn }: { refreshOn: number }) {
  const [status, setStatus] = useState('all');
  const [cursors, setCursors] = useState<string[]>([]);
  const [page, setPage] = useState<Page | null>(null);
  const before = cursors[cursors.length - 1];
  useEffect(() => {
    const query = new URLSearchParams({ limit: '10' });
    if (status !== 'all') query.set('status', status);
    if (before) query.set('before', before);
    void api<Page>('GET', `/v1/transfers?${query}`).then(setPage, () => setPage({ data: [], has_more: false, next_cursor: null }));
  }, [status, before, refreshOn]);
  return (
    <Section title="Transfers">
      <Select label="Status" name="status-filter" value={status} options={STATUSES} onInput={(value) => { setStatus(value); setCursors([]); }} />
      {page === null ? <p>Loading…</p> : page.data.length === 0 ? <p>No transfers{status === 'all' ? '' : ` ${status}`} yet.</p> : (
        <div class="table-scroll" tabIndex={0} role="region" aria-label="Transfers">
          <table>
            <thead><tr><th scope="col">Created</th><th scope="col">Recipient</th><th scope="col">Amount</th><th scope="col">Status</th></tr></thead>
            <tbody>{page.data.map((t) => (
              <tr key={t.transfer_id}>
                <td><time dateTime={t.created_at}>{new Date(t.created_at).toLocaleString()}</time></td>
                <td>{t.recipient?.email ?? t.type}</td><td class="amount">{t.amount} {t.currency}</td><td>{t.status}</td>
              </tr>
            ))}</tbody>
          </table>
        </div>
      )}
      <div class="pager">
        <button type="button" disabled={cursors.length === 0} onClick={() => setCursors(cursors.slice(0, -1))}>Previous page</button>
        <button type="button" disabled={!page?.has_more} onClick={() => page?.next_cursor && setCursors([...cursors, page.next_cursor])}>Next page</button>
      </div>
    </Section>
  );
}
