// The overview: each currency's available and pending balance, test funds from the faucet, and
// the live activity of the account (its events as they arrive).
import { useEffect, useState } from 'preact/hooks';
import { api } from '../api';
import type { DomainEvent } from '../events';
import { Field, FormError, Section, Select, useSubmit } from '../forms';
import { ScrollTable } from '../lists';
import { BalanceChart } from './balance-chart';

interface Balance { currency: string; available: string; pending: string }
export const CURRENCIES = ['USD', 'EUR', 'GBP', 'USDC', 'EURC'];

export function Overview({ events }: { events: DomainEvent[] }) {
  const [balances, setBalances] = useState<Balance[] | null>(null);
  const [currency, setCurrency] = useState('USD');
  const [amount, setAmount] = useState('');
  const [credited, setCredited] = useState<string | null>(null);
  const faucet = useSubmit();
  const refresh = () => api<{ breakdown: Balance[] }>('GET', '/v1/accounts/me/balance').then((b) => setBalances(b.breakdown), () => setBalances([]));
  // A balance event (the faucet's, a transfer's) refreshes the table.
  const balanceEvents = events.filter((e) => e.type === 'balance.updated').length;
  useEffect(() => { void refresh(); }, [balanceEvents]);
  return (
    <>
      <Section title="Balances">
        {balances === null ? <p>Loading…</p> : balances.length === 0 ? <p>No money yet: add test funds below.</p> : (
          <ScrollTable label="Balances by currency" columns={['Currency', 'Available', 'Pending']}>{balances.map((b) => <tr key={b.currency}><th scope="row">{b.currency}</th><td class="amount">{b.available}</td><td class="amount">{b.pending}</td></tr>)}</ScrollTable>
        )}
      </Section>
      {balances === null ? null : <BalanceChart currencies={balances.map((b) => b.currency)} refreshOn={balanceEvents} />}
      <Section title="Add test funds">
        <form onSubmit={(e) => {
          e.preventDefault();
          void faucet.submit(async () => {
            const answer = await api<{ amount: string; currency: string }>('POST', '/v1/sandbox/faucet', { currency, amount });
            setCredited(`${answer.amount} ${answer.currency} added`);
            setAmount('');
            await refresh();
          });
        }}>
          <FormError message={faucet.errors.form} />
          <Select label="Currency" name="faucet-currency" value={currency} options={CURRENCIES} onInput={setCurrency} />
          <Field label="Amount" name="faucet-amount" inputMode="decimal" value={amount} onInput={setAmount} error={faucet.errors.fields.amount ?? faucet.errors.fields.currency} />
          <button type="submit" disabled={faucet.busy}>Add test funds</button>
          <p role="status" class="hint">{credited}</p>
        </form>
      </Section>
      <Activity events={events} />
    </>
  );
}

export function Activity({ events }: { events: DomainEvent[] }) {
  return (
    <Section title="Activity">
      <div role="log" aria-live="polite" aria-label="Activity" class="activity">
        <ol>
        {events.length === 0 ? <li class="hint">Events appear here as they happen.</li> : events.map((event) => (
          <li key={event.id}>
            <span class="event-type">{event.type}</span>{' '}
            {event.data.amount ? <span class="amount">{event.data.amount} {event.data.currency}</span> : null}{' '}
            <time dateTime={event.created_at}>{new Date(event.created_at).toLocaleTimeString()}</time>
          </li>
        ))}
        </ol>
      </div>
    </Section>
  );
}
