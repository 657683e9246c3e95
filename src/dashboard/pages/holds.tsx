// Holds: authorize an amount now (it leaves available at once), and for each hold its status,
// what was captured, the time left until the ledger releases it by itself, and capture (part or
// all, final or not), raise (an increment: more held from the same side) or void. Every write is a
// ledger command: a retry keeps its Idempotency-Key.
import { useEffect, useRef, useState } from 'preact/hooks';
import { ledgerWrite, RetryKeys } from '../api';
import type { DomainEvent } from '../events';
import { Field, FormError, Section, Select, useSubmit } from '../forms';
import { FitTable, useFetched, usePaged, When, type FitRow } from '../lists';
import { CURRENCIES } from './overview';
import { sideOptions, useWallets, type Wallet } from './wallets';

interface Capture { id: string; amount: string; transfer_id: string; recipient_email: string; final: boolean; created_at: string }
interface Hold {
  id: string; status: 'active' | 'captured' | 'voided' | 'expired'; amount: string; currency: string; captured_amount: string; released_amount: string;
  wallet_id: string; description: string | null; captures: Capture[]; expires_at: string; created_at: string; updated_at: string;
}
const STATUSES = ['all', 'active', 'captured', 'voided', 'expired'];

/** The time now, a new one each second: what counts the time left down. */
function useNow(): number {
  const [now, setNow] = useState(Date.now);
  useEffect(() => {
    const timer = setInterval(() => setNow(Date.now()), 1000);
    return () => clearInterval(timer);
  }, []);
  return now;
}

/** The time left until `at` in words, its two largest units ("6 d 23 h", "4 min 10 s"). */
export function timeLeft(at: string, now: number): string {
  const seconds = Math.max(0, Math.floor((Date.parse(at) - now) / 1000));
  if (seconds === 0) return 'due now';
  const parts: Array<[number, string]> = [[Math.floor(seconds / 86_400), 'd'], [Math.floor(seconds / 3600) % 24, 'h'], [Math.floor(seconds / 60) % 60, 'min'], [seconds % 60, 's']];
  const first = parts.findIndex(([n]) => n > 0);
  return parts.slice(first, first + 2).filter(([n]) => n > 0).map(([n, unit]) => `${n} ${unit}`).join(' ');
}

const holdName = (h: Hold) => `hold of ${h.amount} ${h.currency}${h.description ? ` (${h.description})` : ''}`;

export function Holds({ events }: { events: DomainEvent[] }) {
  const [changed, setChanged] = useState(0);
  const [status, setStatus] = useState('all');
  const [shown, setShown] = useState<string | null>(null);
  const opener = useRef<HTMLElement | null>(null);
  const holdEvents = events.filter((e) => e.resource_type === 'hold').length;
  const refreshOn = `${changed}-${holdEvents}`;
  const wallets = useWallets(refreshOn);
  const { page, error, pager } = usePaged<Hold>('/v1/holds', { status: status === 'all' ? undefined : status }, refreshOn);
  const now = useNow();
  const walletName = (id: string) => (id === 'main' ? 'Main balance' : wallets?.find((w) => w.id === id)?.name ?? id);
  const rows: FitRow[] = (page?.data ?? []).map((h) => ({
    key: h.id,
    cells: [
      <When at={h.created_at} />, h.description ?? <span class="hint">—</span>, walletName(h.wallet_id),
      <span class="amount">{h.amount} {h.currency}</span>, <span class="amount">{h.captured_amount}</span>, h.status,
      h.status === 'active' ? <span data-testid="time-left">{timeLeft(h.expires_at, now)}</span> : <span class="hint">—</span>,
      // The visible words start the name a screen reader hears, which then says which hold.
      <button type="button" class="link" aria-label={`${h.status === 'active' ? 'Capture or void' : 'Details of'} the ${holdName(h)} created ${new Date(h.created_at).toLocaleString()}`}
        onClick={(e) => { opener.current = e.currentTarget; setShown(h.id); }}>{h.status === 'active' ? 'Capture or void' : 'Details'}</button>,
    ],
  }));
  return (
    <>
      <NewHold wallets={wallets ?? []} onCreated={(hold) => { setChanged((n) => n + 1); setShown(hold.id); }} />
      <Section title="Holds" wide>
        <Select label="Hold status" name="hold-status" value={status} options={STATUSES} onInput={setStatus} />
        <FormError message={error} />
        {page === null ? <p>Loading…</p> : page.data.length === 0 ? <p>No holds{status === 'all' ? '' : ` ${status}`} yet.</p> : (
          <FitTable label="Holds list" columns={['Created', 'Description', 'Wallet', 'Amount', 'Captured', 'Status', 'Time left', { hidden: 'Actions' }]} rows={rows} />
        )}
        {pager}
      </Section>
      {shown ? (
        <HoldDetail key={shown} id={shown} refreshOn={refreshOn} now={now} walletName={walletName} onChanged={() => setChanged((n) => n + 1)}
          onClose={() => { setShown(null); setTimeout(() => { if (opener.current?.isConnected) opener.current.focus(); }, 0); }} />
      ) : null}
    </>
  );
}

function NewHold({ wallets, onCreated }: { wallets: Wallet[]; onCreated: (hold: Hold) => void }) {
  const [form, setForm] = useState({ amount: '', currency: 'USD', wallet: 'main', description: '' });
  const keys = useRef(new RetryKeys());
  const create = useSubmit((details) => ({ amount: 'amount', description: 'description' })[details ?? ''] ?? null);
  const set = (name: keyof typeof form) => (value: string) => setForm({ ...form, [name]: value });
  return (
    <Section title="New hold" wide>
      <p class="hint">The amount leaves what is available at once, until it is captured, voided, or released by itself in 7 days.</p>
      <form onSubmit={(e) => {
        e.preventDefault();
        void create.submit(async () => {
          const body: Record<string, string> = { amount: form.amount.trim(), currency: form.currency, wallet_id: form.wallet };
          if (form.description.trim()) body.description = form.description.trim();
          const hold = await ledgerWrite<Hold>(keys.current, '/v1/holds', body);
          setForm({ ...form, amount: '', description: '' });
          onCreated(hold);
        });
      }}>
        <FormError message={create.errors.form} />
        <div class="filters">
          <Field label="Amount to hold" name="hold-amount" inputMode="decimal" value={form.amount} onInput={set('amount')} error={create.errors.fields.amount} />
          <Select label="Currency to hold" name="hold-currency" value={form.currency} options={CURRENCIES} onInput={set('currency')} />
          <Select label="Hold on" name="hold-wallet" value={form.wallet} options={sideOptions(wallets)} onInput={set('wallet')} />
          <Field label="Description (optional)" name="hold-description" value={form.description} onInput={set('description')} error={create.errors.fields.description} required={false} autoComplete="off" />
        </div>
        <button type="submit" disabled={create.busy}>Create hold</button>
      </form>
    </Section>
  );
}

interface DetailProps { id: string; refreshOn: string; now: number; walletName: (id: string) => string; onChanged: () => void; onClose: () => void }

function HoldDetail({ id, refreshOn, now, walletName, onChanged, onClose }: DetailProps) {
  const [changed, setChanged] = useState(0);
  const fetched = useFetched<Hold>(`/v1/holds/${id}`, `${refreshOn}-${changed}`);
  const [answered, setAnswered] = useState<Hold | null>(null);
  const [said, setSaid] = useState<string | null>(null);
  const heading = useRef<HTMLHeadingElement>(null);
  const told = useRef<HTMLParagraphElement>(null);
  // The newer of what was read and what the last capture, raise or void answered (a read may
  // still be on its way, or have left before the write).
  const hold = answered && (!fetched || answered.updated_at > fetched.updated_at || fetched.captures.length < answered.captures.length
    || (fetched.status === 'active' && answered.status !== 'active')) ? answered : fetched;
  useEffect(() => { if (hold) heading.current?.focus(); }, [hold?.id]);
  useEffect(() => { if (said) told.current?.focus(); }, [said]);
  if (!hold) return <Section title="Hold" wide><p>Loading…</p></Section>;
  const done = (next: Hold, what: string) => { setAnswered(next); setSaid(what); setChanged((n) => n + 1); onChanged(); };
  const left = leftOf(hold);
  return (
    <section aria-labelledby="hold-heading" class="card wide">
      <h2 id="hold-heading" tabIndex={-1} ref={heading}>Hold of {hold.amount} {hold.currency}{hold.description ? `: ${hold.description}` : ''}</h2>
      {said ? <p role="status" class="result" tabIndex={-1} ref={told}>{said}</p> : null}
      <dl class="facts">
        <dt>Status</dt><dd data-testid="hold-status">{hold.status}</dd>
        <dt>On</dt><dd>{walletName(hold.wallet_id)}</dd>
        <dt>Held</dt><dd class="amount">{hold.amount} {hold.currency}</dd>
        <dt>Captured</dt><dd class="amount" data-testid="hold-captured">{hold.captured_amount} {hold.currency}</dd>
        <dt>Released</dt><dd class="amount">{hold.released_amount} {hold.currency}</dd>
        <dt>Left to capture</dt><dd class="amount">{left} {hold.currency}</dd>
        <dt>Expires</dt><dd><When at={hold.expires_at} />{hold.status === 'active' ? ` (in ${timeLeft(hold.expires_at, now)})` : ''}</dd>
        <dt>Id</dt><dd><code>{hold.id}</code></dd>
      </dl>
      {hold.captures.length > 0 ? (
        <FitTable label="Captures" columns={['Captured', 'Amount', 'Recipient', 'Final', 'Transfer']} rows={hold.captures.map((c) => ({
          key: c.id, cells: [<When at={c.created_at} />, <span class="amount">{c.amount}</span>, c.recipient_email, c.final ? 'yes' : 'no', <code>{c.transfer_id}</code>],
        }))} />
      ) : null}
      {hold.status === 'active' ? <><CaptureForm hold={hold} onDone={done} /><RaiseForm hold={hold} onDone={done} /><VoidButton hold={hold} onDone={done} /></> : null}
      <p><button type="button" class="secondary" onClick={onClose}>Back to the holds</button></p>
    </section>
  );
}

/** What is left of a hold: amount − captured − released, exact in minor units (decimal strings, never floats). */
function leftOf(hold: Hold): string {
  const scale = hold.amount.split('.')[1]?.length ?? 0;
  const units = (s: string) => BigInt(s.replace('.', '').replace(/^(-?)0+(?=\d)/, '$1'));
  const rest = units(hold.amount) - units(hold.captured_amount) - units(hold.released_amount);
  const digits = rest.toString().padStart(scale + 1, '0');
  return scale === 0 ? digits : `${digits.slice(0, -scale)}.${digits.slice(-scale)}`;
}

type Done = (next: Hold, what: string) => void;

function CaptureForm({ hold, onDone }: { hold: Hold; onDone: Done }) {
  const [form, setForm] = useState({ amount: '', email: '', final: false });
  const keys = useRef(new RetryKeys());
  const capture = useSubmit((details) => ({ amount: 'amount', recipient_email: 'email', recipient: 'email' })[details ?? ''] ?? null);
  const set = (name: 'amount' | 'email') => (value: string) => setForm({ ...form, [name]: value });
  return (
    <form aria-labelledby="capture-heading" onSubmit={(e) => {
      e.preventDefault();
      void capture.submit(async () => {
        const next = await ledgerWrite<Hold>(keys.current, `/v1/holds/${hold.id}/capture`, { amount: form.amount.trim(), recipient_email: form.email.trim(), final: form.final });
        onDone(next, `Captured ${form.amount.trim()} ${hold.currency} for ${form.email.trim()}${next.status === 'active' ? '' : `; the hold is ${next.status} now`}.`);
        setForm({ amount: '', email: form.email, final: false });
      });
    }}>
      <h3 id="capture-heading">Capture</h3>
      <FormError message={capture.errors.form} />
      <Field label="Amount to capture" name="capture-amount" inputMode="decimal" value={form.amount} onInput={set('amount')} error={capture.errors.fields.amount} />
      <Field label="Pay to (recipient email)" name="capture-email" type="email" value={form.email} onInput={set('email')} error={capture.errors.fields.email} />
      <label class="check"><input type="checkbox" name="capture-final" checked={form.final} onChange={(e) => setForm({ ...form, final: (e.target as HTMLInputElement).checked })} /> Final: give back what is left after this capture</label>
      <p><button type="submit" disabled={capture.busy}>Capture</button></p>
    </form>
  );
}

/** An increment: the hold takes more from the side it holds from (a tip, a longer stay). */
function RaiseForm({ hold, onDone }: { hold: Hold; onDone: Done }) {
  const [amount, setAmount] = useState('');
  const keys = useRef(new RetryKeys());
  const raise = useSubmit((details) => (details === 'amount' ? 'amount' : null));
  return (
    <form aria-labelledby="raise-heading" onSubmit={(e) => {
      e.preventDefault();
      void raise.submit(async () => {
        const next = await ledgerWrite<Hold>(keys.current, `/v1/holds/${hold.id}/increment`, { amount: amount.trim() });
        onDone(next, `Raised by ${amount.trim()} ${hold.currency}: the hold holds ${next.amount} ${hold.currency} now.`);
        setAmount('');
      });
    }}>
      <h3 id="raise-heading">Raise</h3>
      <p class="hint">Holds more, from {hold.wallet_id === 'main' ? 'the main balance' : 'its wallet'}: it leaves what is available at once.</p>
      <FormError message={raise.errors.form} />
      <Field label="Amount to add to the hold" name="raise-amount" inputMode="decimal" value={amount} onInput={setAmount} error={raise.errors.fields.amount} />
      <p><button type="submit" disabled={raise.busy}>Raise the hold</button></p>
    </form>
  );
}

function VoidButton({ hold, onDone }: { hold: Hold; onDone: Done }) {
  const keys = useRef(new RetryKeys());
  const voiding = useSubmit(() => null);
  return (
    <>
      <h3>Void</h3>
      <FormError message={voiding.errors.form} />
      <p>
        <button type="button" class="secondary" disabled={voiding.busy} onClick={() => void voiding.submit(async () => {
          const next = await ledgerWrite<Hold>(keys.current, `/v1/holds/${hold.id}/void`);
          onDone(next, `Voided: ${next.released_amount} ${hold.currency} given back to available.`);
        })}>Void the rest of this hold</button>
      </p>
    </>
  );
}
