// FX: lock a rate for the account (POST /v1/fx/quote), watch the time it holds run down, and
// convert at it (POST /v1/fx/execute) before it expires.
import { useEffect, useState } from 'preact/hooks';
import { api } from '../api';
import { Field, FormError, Section, Select, useSubmit } from '../forms';

interface Quote { id: string; status: string; from_currency: string; to_currency: string; from_amount: string; to_amount: string; rate: string; expires_at: string }
interface Execution { quote?: Quote; status?: string }
/** The currencies the ledger converts between (the document names the pairs). */
const FX_CURRENCIES = ['USD', 'EUR', 'GBP'];

/** Whole seconds until `at`, never below zero, ticking once a second while there are any. */
function useSecondsUntil(at: string | null): number {
  const left = () => (at ? Math.max(0, Math.ceil((Date.parse(at) - Date.now()) / 1000)) : 0);
  const [seconds, setSeconds] = useState(left);
  useEffect(() => {
    setSeconds(left());
    if (!at) return undefined;
    const timer = setInterval(() => setSeconds(left()), 250);
    return () => clearInterval(timer);
  }, [at]);
  return seconds;
}

export function Fx() {
  const [form, setForm] = useState({ from: 'USD', to: 'EUR', amount: '' });
  const [quote, setQuote] = useState<Quote | null>(null);
  const [converted, setConverted] = useState<Quote | null>(null);
  const quoting = useSubmit((details) => ({ from_currency: 'from', to_currency: 'to', from_amount: 'amount' })[details ?? ''] ?? null);
  const converting = useSubmit(() => null);
  const seconds = useSecondsUntil(quote?.expires_at ?? null);
  const set = (name: keyof typeof form) => (value: string) => setForm({ ...form, [name]: value });
  const expired = quote !== null && seconds === 0;
  return (
    <>
      <Section title="Quote">
        <form onSubmit={(e) => {
          e.preventDefault();
          void quoting.submit(async () => {
            setConverted(null);
            setQuote(null);
            setQuote(await api<Quote>('POST', '/v1/fx/quote', { from_currency: form.from, to_currency: form.to, from_amount: form.amount }));
          });
        }}>
          <FormError message={quoting.errors.form ?? quoting.errors.fields.to ?? quoting.errors.fields.from} />
          <Select label="From" name="fx-from" value={form.from} options={FX_CURRENCIES} onInput={set('from')} />
          <Select label="To" name="fx-to" value={form.to} options={FX_CURRENCIES} onInput={set('to')} />
          <Field label="Amount to convert" name="fx-amount" inputMode="decimal" value={form.amount} onInput={set('amount')} error={quoting.errors.fields.amount} />
          <button type="submit" disabled={quoting.busy}>Get quote</button>
        </form>
      </Section>
      {quote ? (
        <Section title="Locked rate">
          <dl class="facts">
            <dt>You convert</dt><dd class="amount">{quote.from_amount} {quote.from_currency}</dd>
            <dt>You receive</dt><dd class="amount">{quote.to_amount} {quote.to_currency}</dd>
            <dt>Rate</dt><dd class="amount">{quote.rate}</dd>
            <dt>Quote</dt><dd><code data-testid="quote-id">{quote.id}</code></dd>
          </dl>
          {converted ? null : (
            <p role="timer" aria-live="off" class={expired ? 'countdown over' : 'countdown'} data-testid="countdown">
              {expired ? 'This quote has expired: get a new one.' : `Expires in ${seconds} s`}
            </p>
          )}
          <FormError message={converting.errors.form} />
          {converted ? (
            <p role="status" class="result">Converted {converted.from_amount} {converted.from_currency} into {converted.to_amount} {converted.to_currency}.</p>
          ) : (
            <button type="button" disabled={expired || converting.busy} onClick={() => void converting.submit(async () => {
              const answer = await api<Execution>('POST', '/v1/fx/execute', { quote_id: quote.id });
              // A conversion the ledger has not finished yet answers pending: the quote says when it is done.
              setConverted(answer.quote ?? await consumedQuote(quote.id));
            })}>Convert</button>
          )}
        </Section>
      ) : null}
    </>
  );
}

/** The quote once the ledger has consumed it (a pending conversion finishes within seconds). */
async function consumedQuote(id: string): Promise<Quote> {
  for (let attempt = 0; attempt < 20; attempt += 1) {
    const quote = await api<Quote>('GET', `/v1/fx/quotes/${id}`);
    if (quote.status === 'consumed') return quote;
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
  throw new Error('the conversion is still being made: see the balances in a moment');
}
