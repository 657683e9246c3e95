// Wallets: the account's named pockets beside its main balance, each one's balances per currency
// (available, held by holds, pending payouts), now or at an instant, a new wallet, renaming and closing one, and moving
// money between them through POST /v1/wallet-transfers (a retry keeps its Idempotency-Key).
import { useEffect, useRef, useState } from 'preact/hooks';
import { api, ledgerWrite, RetryKeys } from '../api';
import type { DomainEvent } from '../events';
import { Field, FormError, Section, Select, useSubmit } from '../forms';
import { FitTable, type FitRow } from '../lists';
import { atQuery, atRefusal, BalanceAt } from './balance-at';
import { CURRENCIES } from './overview';

export interface Wallet { id: string; name: string; status: 'open' | 'closed'; metadata: Record<string, string>; created_at: string }
interface Balance { currency: string; available: string; held: string; pending: string }
interface WalletTransfer { id: string; from_wallet_id: string; to_wallet_id: string; amount: string; currency: string; status: string }

/** The account's wallets (its first 100: a sandbox account keeps a handful), read again when `refreshOn` changes. */
export function useWallets(refreshOn: unknown): Wallet[] | null {
  const [wallets, setWallets] = useState<Wallet[] | null>(null);
  useEffect(() => {
    let current = true;
    api<{ data: Wallet[] }>('GET', '/v1/wallets?limit=100').then((answer) => { if (current) setWallets(answer.data); }, () => { if (current) setWallets([]); });
    return () => { current = false; };
  }, [refreshOn]);
  return wallets;
}

/** "main" and the open wallets, as a select's options. */
export const sideOptions = (wallets: Wallet[]) => [{ value: 'main', label: 'Main balance' }, ...wallets.filter((w) => w.status === 'open').map((w) => ({ value: w.id, label: w.name }))];

export function Wallets({ events }: { events: DomainEvent[] }) {
  // Our own changes and the account's balance and hold events redraw the balances.
  const [changed, setChanged] = useState(0);
  const moved = events.filter((e) => e.type === 'balance.updated' || e.resource_type === 'hold').length;
  const wallets = useWallets(`${changed}-${moved}`);
  const refresh = () => setChanged((n) => n + 1);
  return (
    <>
      <Section title="Wallet balances" wide>
        {wallets === null ? <p>Loading…</p> : <BalanceTable wallets={wallets} refreshOn={`${changed}-${moved}`} />}
      </Section>
      <MoveMoney wallets={wallets ?? []} onMoved={refresh} />
      <NewWallet onCreated={refresh} />
      <WalletList wallets={wallets} onChanged={refresh} />
    </>
  );
}

function BalanceTable({ wallets, refreshOn }: { wallets: Wallet[]; refreshOn: string }) {
  const [rows, setRows] = useState<Array<{ wallet: string; balance: Balance }> | null>(null);
  const [at, setAt] = useState<string | null>(null);
  const [atError, setAtError] = useState<string | null>(null);
  const sides = [{ id: 'main', name: 'Main balance' }, ...wallets.filter((w) => w.status === 'open')];
  useEffect(() => {
    let current = true;
    Promise.all(sides.map(async (side) => (await api<{ balances: Balance[] }>('GET', atQuery(`/v1/wallets/${side.id}/balances`, at))).balances.map((balance) => ({ wallet: side.name, balance }))))
      .then(
        (all) => { if (current) { setRows(all.flat()); setAtError(null); } },
        (error) => { if (current) { setRows([]); setAtError(atRefusal(error)); } },
      );
    return () => { current = false; };
  }, [refreshOn, at, sides.map((s) => s.id).join()]);
  return (
    <>
      <BalanceAt name="wallet-balance-at" at={at} onAt={setAt} error={atError} />
      {atError ? null : <BalanceRows rows={rows} at={at} />}
    </>
  );
}

function BalanceRows({ rows, at }: { rows: Array<{ wallet: string; balance: Balance }> | null; at: string | null }) {
  if (rows === null) return <p>Loading…</p>;
  if (rows.length === 0) return <p>{at ? 'No money at that instant.' : 'No money yet: add test funds on the overview.'}</p>;
  const fitRows: FitRow[] = rows.map(({ wallet, balance: b }) => ({
    key: `${wallet}-${b.currency}`, heading: true,
    cells: [wallet, b.currency, <span class="amount">{b.available}</span>, <span class="amount">{b.held}</span>, <span class="amount">{b.pending}</span>],
  }));
  return <FitTable label="Balances by wallet and currency" columns={['Wallet', 'Currency', 'Available', 'Held', 'Pending']} rows={fitRows} />;
}

function MoveMoney({ wallets, onMoved }: { wallets: Wallet[]; onMoved: () => void }) {
  const [form, setForm] = useState({ from: 'main', to: '', amount: '', currency: 'USD' });
  const [done, setDone] = useState<string | null>(null);
  const keys = useRef(new RetryKeys());
  const told = useRef<HTMLParagraphElement>(null);
  const move = useSubmit((details) => ({ from_wallet_id: 'from', to_wallet_id: 'to', amount: 'amount', currency: 'currency' })[details ?? ''] ?? null);
  const options = sideOptions(wallets);
  // Until a wallet is chosen, money goes to the first wallet that is not where it comes from.
  const to = form.to || options.find((o) => o.value !== form.from)?.value || 'main';
  const set = (name: keyof typeof form) => (value: string) => { setDone(null); setForm({ ...form, [name]: value }); };
  const nameOf = (id: string) => options.find((o) => o.value === id)?.label ?? id;
  useEffect(() => { if (done) told.current?.focus(); }, [done]);
  return (
    <Section title="Move money">
      {options.length < 2 ? <p class="hint">Create a wallet first: money moves between the main balance and wallets.</p> : null}
      <form onSubmit={(e) => {
        e.preventDefault();
        void move.submit(async () => {
          setDone(null);
          const answer = await ledgerWrite<WalletTransfer>(keys.current, '/v1/wallet-transfers', { from_wallet_id: form.from, to_wallet_id: to, amount: form.amount.trim(), currency: form.currency });
          setDone(`Moved ${answer.amount} ${answer.currency} from ${nameOf(answer.from_wallet_id)} to ${nameOf(answer.to_wallet_id)}.`);
          setForm({ ...form, amount: '' });
          onMoved();
        });
      }}>
        <FormError message={move.errors.form} />
        <Select label="From" name="move-from" value={form.from} options={options} onInput={set('from')} />
        <Select label="To" name="move-to" value={to} options={options} onInput={set('to')} />
        {move.errors.fields.from || move.errors.fields.to ? <p class="field-error" role="alert">{move.errors.fields.from ?? move.errors.fields.to}</p> : null}
        <Field label="Amount to move" name="move-amount" inputMode="decimal" value={form.amount} onInput={set('amount')} error={move.errors.fields.amount} />
        <Select label="Currency to move" name="move-currency" value={form.currency} options={CURRENCIES} onInput={set('currency')} />
        <button type="submit" disabled={move.busy || options.length < 2}>Move</button>
      </form>
      {done ? <p role="status" class="result" tabIndex={-1} ref={told}>{done}</p> : null}
    </Section>
  );
}

function NewWallet({ onCreated }: { onCreated: () => void }) {
  const [name, setName] = useState('');
  const [done, setDone] = useState<string | null>(null);
  const create = useSubmit((details) => (details === 'name' ? 'name' : null));
  return (
    <Section title="New wallet">
      <form onSubmit={(e) => {
        e.preventDefault();
        void create.submit(async () => {
          setDone(null);
          const wallet = await api<Wallet>('POST', '/v1/wallets', { name: name.trim() });
          setDone(`Wallet ${wallet.name} created.`);
          setName('');
          onCreated();
        });
      }}>
        <FormError message={create.errors.form} />
        <Field label="Wallet name" name="wallet-name" value={name} onInput={(value) => { setDone(null); setName(value); }} error={create.errors.fields.name} autoComplete="off" />
        <button type="submit" disabled={create.busy}>Create wallet</button>
      </form>
      {done ? <p role="status" class="result">{done}</p> : null}
    </Section>
  );
}

function WalletList({ wallets, onChanged }: { wallets: Wallet[] | null; onChanged: () => void }) {
  const [renaming, setRenaming] = useState<Wallet | null>(null);
  // What was done; a close also takes the focus there, since the button pressed is gone.
  const [said, setSaid] = useState<{ text: string; focus: boolean } | null>(null);
  const close = useSubmit(() => null);
  const opener = useRef<HTMLElement | null>(null);
  const told = useRef<HTMLParagraphElement>(null);
  useEffect(() => { if (said?.focus) told.current?.focus(); }, [said]);
  const back = () => { setRenaming(null); setTimeout(() => { if (opener.current?.isConnected) opener.current.focus(); }, 0); };
  const rows: FitRow[] = (wallets ?? []).map((w) => ({
    key: w.id, heading: true,
    cells: [w.name, w.status, <code>{w.id}</code>, w.status === 'open' ? (
      <span class="toolbar">
        <button type="button" class="link" aria-label={`Rename ${w.name}`} onClick={(e) => { opener.current = e.currentTarget; setSaid(null); setRenaming(w); }}>Rename</button>
        <button type="button" class="link" aria-label={`Close ${w.name}`} disabled={close.busy} onClick={() => void close.submit(async () => {
          setSaid(null);
          const closed = await api<Wallet>('POST', `/v1/wallets/${w.id}/close`);
          setSaid({ text: `Wallet ${closed.name} closed.`, focus: true });
          onChanged();
        })}>Close</button>
      </span>
    ) : <span class="hint">closed</span>],
  }));
  return (
    <>
      <Section title="Wallets" wide>
        <FormError message={close.errors.form} />
        {said ? <p role="status" class="result" tabIndex={-1} ref={told}>{said.text}</p> : null}
        {wallets === null ? <p>Loading…</p> : wallets.length === 0 ? <p>No wallets yet: create one.</p> : (
          <FitTable label="Wallets list" columns={['Name', 'Status', 'Id', { hidden: 'Actions' }]} rows={rows} />
        )}
      </Section>
      {renaming ? <RenameWallet key={renaming.id} wallet={renaming} onDone={(wallet) => { if (wallet) { setSaid({ text: `Wallet renamed to ${wallet.name}.`, focus: false }); onChanged(); } back(); }} /> : null}
    </>
  );
}

function RenameWallet({ wallet, onDone }: { wallet: Wallet; onDone: (renamed: Wallet | null) => void }) {
  const [name, setName] = useState(wallet.name);
  const rename = useSubmit((details) => (details === 'name' ? 'name' : null));
  const input = useRef<HTMLDivElement>(null);
  // Opening the form takes the reader to its field.
  useEffect(() => { input.current?.querySelector('input')?.focus(); }, [wallet.id]);
  return (
    <Section title={`Rename ${wallet.name}`}>
      <form onSubmit={(e) => {
        e.preventDefault();
        void rename.submit(async () => onDone(await api<Wallet>('PATCH', `/v1/wallets/${wallet.id}`, { name: name.trim() })));
      }}>
        <FormError message={rename.errors.form} />
        <div ref={input}><Field label="New name" name="wallet-new-name" value={name} onInput={setName} error={rename.errors.fields.name} autoComplete="off" /></div>
        <div class="toolbar">
          <button type="submit" disabled={rename.busy}>Save name</button>
          <button type="button" class="secondary" onClick={() => onDone(null)}>Cancel</button>
        </div>
      </form>
    </Section>
  );
}
