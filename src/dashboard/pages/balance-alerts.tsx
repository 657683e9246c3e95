// Balance alerts: watch an available balance (the main balance's or a wallet's, one currency)
// against a threshold, below or above (POST /v1/balance-alerts); the account's alerts, each
// deleted with its own button. A crossing arrives as balance.threshold_crossed, in the activity.
import { useEffect, useRef, useState } from 'preact/hooks';
import { api } from '../api';
import type { DomainEvent } from '../events';
import { Field, FormError, Section, Select, useSubmit } from '../forms';
import { FitTable, usePaged, When, type FitRow } from '../lists';
import { Activity } from './activity';
import { CURRENCIES } from './overview';
import { sideOptions, useWallets, type Wallet } from './wallets';

interface BalanceAlert { id: string; currency: string; wallet_id: string; below: string | null; above: string | null; created_at: string }
const DIRECTIONS = [{ value: 'below', label: 'Falls below' }, { value: 'above', label: 'Rises above' }];
/** The API's fields as the form names them. */
const fieldOf = (details: string | null) => ({ below: 'amount', above: 'amount', currency: 'currency', wallet_id: 'wallet' })[details ?? ''] ?? null;

export function BalanceAlerts({ events }: { events: DomainEvent[] }) {
  const [changed, setChanged] = useState(0);
  const wallets = useWallets(changed);
  return (
    <>
      <NewAlert wallets={wallets ?? []} onCreated={() => setChanged((n) => n + 1)} />
      <AlertList wallets={wallets ?? []} refreshOn={changed} onChanged={() => setChanged((n) => n + 1)} />
      <Activity events={events.filter((e) => e.type === 'balance.threshold_crossed')} />
    </>
  );
}

function NewAlert({ wallets, onCreated }: { wallets: Wallet[]; onCreated: () => void }) {
  const [form, setForm] = useState({ currency: 'USD', wallet: 'main', direction: 'below', amount: '' });
  const [done, setDone] = useState<string | null>(null);
  const create = useSubmit(fieldOf);
  const set = (name: keyof typeof form) => (value: string) => { setDone(null); setForm({ ...form, [name]: value }); };
  const options = sideOptions(wallets);
  return (
    <Section title="New alert">
      <form onSubmit={(e) => {
        e.preventDefault();
        void create.submit(async () => {
          setDone(null);
          const alert = await api<BalanceAlert>('POST', '/v1/balance-alerts', { currency: form.currency, wallet_id: form.wallet, [form.direction]: form.amount.trim() });
          setDone(`Alert created: ${thresholdInWords(alert)} on ${options.find((o) => o.value === alert.wallet_id)?.label ?? alert.wallet_id}.`);
          setForm({ ...form, amount: '' });
          onCreated();
        });
      }}>
        <FormError message={create.errors.form} />
        <Select label="Alert currency" name="alert-currency" value={form.currency} options={CURRENCIES} onInput={set('currency')} />
        <Select label="Balance watched" name="alert-wallet" value={form.wallet} options={options} onInput={set('wallet')} />
        {create.errors.fields.currency || create.errors.fields.wallet ? <p class="field-error" role="alert">{create.errors.fields.currency ?? create.errors.fields.wallet}</p> : null}
        <Select label="When the available balance" name="alert-direction" value={form.direction} options={DIRECTIONS} onInput={set('direction')} />
        <Field label="Threshold amount" name="alert-amount" inputMode="decimal" value={form.amount} onInput={set('amount')} error={create.errors.fields.amount} />
        <button type="submit" disabled={create.busy}>Create alert</button>
      </form>
      {done ? <p role="status" class="result">{done}</p> : null}
    </Section>
  );
}

const thresholdInWords = (alert: BalanceAlert) => (alert.below !== null ? `below ${alert.below} ${alert.currency}` : `above ${alert.above} ${alert.currency}`);

function AlertList({ wallets, refreshOn, onChanged }: { wallets: Wallet[]; refreshOn: number; onChanged: () => void }) {
  const { page, error, pager } = usePaged<BalanceAlert>('/v1/balance-alerts', {}, refreshOn);
  // A delete takes the focus to what was done, since the button pressed is gone.
  const [said, setSaid] = useState<string | null>(null);
  const remove = useSubmit(() => null);
  const told = useRef<HTMLParagraphElement>(null);
  useEffect(() => { if (said) told.current?.focus(); }, [said]);
  const nameOf = (walletId: string) => (walletId === 'main' ? 'Main balance' : wallets.find((w) => w.id === walletId)?.name ?? walletId);
  const rows: FitRow[] = (page?.data ?? []).map((alert) => ({
    key: alert.id, heading: true,
    cells: [thresholdInWords(alert), nameOf(alert.wallet_id), <When at={alert.created_at} />, (
      <button type="button" class="link" aria-label={`Delete the alert ${thresholdInWords(alert)} on ${nameOf(alert.wallet_id)}`} disabled={remove.busy} onClick={() => void remove.submit(async () => {
        setSaid(null);
        await api('DELETE', `/v1/balance-alerts/${alert.id}`);
        setSaid(`Alert ${thresholdInWords(alert)} on ${nameOf(alert.wallet_id)} deleted.`);
        onChanged();
      })}>Delete</button>
    )],
  }));
  return (
    <Section title="Alerts" wide>
      <FormError message={remove.errors.form ?? error} />
      {said ? <p role="status" class="result" tabIndex={-1} ref={told}>{said}</p> : null}
      {page === null ? <p>Loading…</p> : page.data.length === 0 ? <p>No alerts yet: create one.</p> : (
        <FitTable label="Alerts list" columns={['Threshold', 'Balance watched', 'Created', { hidden: 'Actions' }]} rows={rows} />
      )}
      {pager}
    </Section>
  );
}
