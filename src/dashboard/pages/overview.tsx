// The overview: each currency's available and pending balance, now or at an instant, test funds
// from the faucet, and the live activity of the account (its events as they arrive).
import { useEffect, useState } from 'preact/hooks';
import { api } from '../api';
import type { DomainEvent } from '../events';
import { Field, FormError, Section, Select, useSubmit } from '../forms';
import { ScrollTable } from '../lists';
import { Activity } from './activity';
import { atQuery, atRefusal, BalanceAt } from './balance-at';
import { BalanceChart } from './balance-chart';

interface Balance { currency: string; available: string; pending: string }
export const CURRENCIES = ['USD', 'EUR', 'GBP', 'USDC', 'EURC'];

export function Overview({ events }: { events: DomainEvent[] }) {
  const [balances, setBalances] = useState<Balance[] | null>(null);
  const [currency, setCurrency] = useState('USD');
  const [amount, setAmount] = useState('');
  const [credited, setCredited] = useState<string | null>(null);
  const [at, setAt] = useState<string | null>(null);
  const [atError, setAtError] = useState<string | null>(null);
  const faucet = useSubmit();
  const refresh = () => api<{ breakdown: Balance[] }>('GET', atQuery('/v1/accounts/me/balance', at)).then(
    (b) => { setBalances(b.breakdown); setAtError(null); },
    (error) => { setBalances([]); setAtError(atRefusal(error)); },
  );
  // A balance event (the faucet's, a transfer's) refreshes the table.
  const balanceEvents = events.filter((e) => e.type === 'balance.updated').length;
  useEffect(() => { void refresh(); }, [balanceEvents, at]);
  return (
    <>
      <Section title="Balances">
        <BalanceAt name="balance-at" at={at} onAt={setAt} error={atError} />
        {balances === null ? <p>Loading…</p> : atError ? null : balances.length === 0 ? <p>{at ? 'No money at that instant.' : 'No money yet: add test funds below.'}</p> : (
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
