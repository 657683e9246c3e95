// A payment out for a linked customer (POST /v1/payments/send): to a payee's bank (fiat), by a
// claim link the payee opens (claimless), or in stablecoins (chain). The payee's bank account is
// in the payment's currency, so the form sends that currency for it.
import { useState } from 'preact/hooks';
import { api } from '../api';
import { Field, FormError, Section, Select, useSubmit } from '../forms';

interface Payment { id: string; status: string; amount: string; currency: string; claim_link: string | null }
const CURRENCIES_OF: Record<string, string[]> = { claimless: ['USD', 'EUR', 'GBP'], fiat: ['USD', 'EUR', 'GBP'], chain: ['USDC', 'EURC'] };
const EMPTY = { partner: 'claimless', amount: '', currency: 'USD', purpose: '', email: '', first_name: '', last_name: '', country_code: '', bank_name: '', bank_account_number: '' };

/** The API's field (payee.bank.bank_name) as the form names it (bank_name). */
const fieldOf = (details: string | null) => (details ? details.replace(/^payee\.(bank\.)?/, '').replace(/^iso_country_code$/, 'country_code') : null);

export function SendPayment({ customerId, linkedPartners }: { customerId: string; linkedPartners: string[] }) {
  const [form, setForm] = useState(EMPTY);
  const [made, setMade] = useState<Payment | null>(null);
  const send = useSubmit(fieldOf);
  const set = (name: keyof typeof form) => (value: string) => setForm({ ...form, [name]: value });
  const currencies = CURRENCIES_OF[form.partner];
  const currency = currencies.includes(form.currency) ? form.currency : currencies[0];
  const fieldError = (name: string) => send.errors.fields[name];
  return (
    <Section title="Send a payment">
      {linkedPartners.length === 0 ? <p class="hint">Link the customer with claimless, fiat or chain first: payments go out through the partner.</p> : null}
      <form onSubmit={(e) => {
        e.preventDefault();
        void send.submit(async () => {
          const country = form.country_code.trim().toUpperCase();
          const payee = {
            email: form.email, first_name: form.first_name, last_name: form.last_name, country_code: country, kind: 'personal',
            ...(form.partner === 'fiat' ? { bank: { iso_country_code: country, bank_name: form.bank_name, currency_code: currency, bank_account_number: form.bank_account_number } } : {}),
          };
          setMade(await api<Payment>('POST', '/v1/payments/send', { customer_id: customerId, partner: form.partner, amount: form.amount, currency, purpose: form.purpose, payee }));
        });
      }}>
        <FormError message={send.errors.form ?? fieldError('customer_id') ?? fieldError('partner') ?? fieldError('currency')} />
        <Select label="Send through" name="send-partner" value={form.partner} options={Object.keys(CURRENCIES_OF)} onInput={set('partner')} />
        <Field label="Payment amount" name="send-amount" inputMode="decimal" value={form.amount} onInput={set('amount')} error={fieldError('amount')} />
        <Select label="Payment currency" name="send-currency" value={currency} options={currencies} onInput={set('currency')} />
        <Field label="Purpose" name="send-purpose" value={form.purpose} onInput={set('purpose')} error={fieldError('purpose')} />
        <Field label="Payee email" name="payee-email" type="email" value={form.email} onInput={set('email')} error={fieldError('email')} />
        <Field label="Payee first name" name="payee-first" value={form.first_name} onInput={set('first_name')} error={fieldError('first_name')} />
        <Field label="Payee last name" name="payee-last" value={form.last_name} onInput={set('last_name')} error={fieldError('last_name')} />
        <Field label="Payee country (ISO code)" name="payee-country" value={form.country_code} onInput={set('country_code')} error={fieldError('country_code')} />
        {form.partner === 'fiat' ? (
          <>
            <Field label="Payee bank name" name="payee-bank" value={form.bank_name} onInput={set('bank_name')} error={fieldError('bank_name')} />
            <Field label="Payee bank account number" name="payee-account" value={form.bank_account_number} onInput={set('bank_account_number')} error={fieldError('bank_account_number')} />
          </>
        ) : null}
        <button type="submit" disabled={send.busy}>Send payment</button>
      </form>
      {made ? (
        <p role="status" class="result">
          Payment of {made.amount} {made.currency}: <strong>{made.status}</strong>
          {made.claim_link ? <> · <a href={made.claim_link} target="_blank" rel="noopener noreferrer">Claim link</a></> : null}
        </p>
      ) : null}
    </Section>
  );
}
