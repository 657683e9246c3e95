// Customers: the account's customers, a new one, and for the one chosen its partner links ("Link"
// opens the partner's consent page in a window of its own; the link turns active here when the
// customer allows it), money in through openbank, and a payment out to a payee.
import { useEffect, useState } from 'preact/hooks';
import { api } from '../api';
import { Field, FormError, Section, Select, useSubmit } from '../forms';
import { ScrollTable, usePaged, When } from '../lists';
import { SendPayment } from './send-payment';

interface Customer { id: string; email: string; business_name: string; country_code: string; created_at: string }
interface PartnerLink { id: string; partner: string; status: string; authorize_url: string | null; linked_at: string | null; created_at: string }
const PARTNERS = ['openbank', 'claimless', 'fiat', 'chain'];
const PENDING_LINK_POLL_MS = 1000;

export function Customers() {
  const [created, setCreated] = useState(0);
  const [chosen, setChosen] = useState<Customer | null>(null);
  const { page, error, pager } = usePaged<Customer>('/v1/customers', {}, created);
  return (
    <>
      <Section title="Customers">
        <FormError message={error} />
        {page === null ? <p>Loading…</p> : page.data.length === 0 ? <p>No customers yet: add one below.</p> : (
          <ul class="choices">
            {page.data.map((c) => (
              <li key={c.id}>
                <button type="button" class="link" aria-pressed={chosen?.id === c.id} onClick={() => setChosen(c)}>{c.business_name}</button>
                {' '}<span class="hint">{c.email} · {c.country_code}</span>
              </li>
            ))}
          </ul>
        )}
        {pager}
      </Section>
      <NewCustomer onCreated={(customer) => { setCreated((n) => n + 1); setChosen(customer); }} />
      {chosen ? <CustomerDetail key={chosen.id} customer={chosen} /> : null}
    </>
  );
}

function NewCustomer({ onCreated }: { onCreated: (customer: Customer) => void }) {
  const [form, setForm] = useState({ email: '', business_name: '', country_code: '' });
  const create = useSubmit();
  const set = (name: keyof typeof form) => (value: string) => setForm({ ...form, [name]: value });
  return (
    <Section title="New customer">
      <form onSubmit={(e) => {
        e.preventDefault();
        void create.submit(async () => {
          onCreated(await api<Customer>('POST', '/v1/customers', { ...form, country_code: form.country_code.trim().toUpperCase() }));
          setForm({ email: '', business_name: '', country_code: '' });
        });
      }}>
        <FormError message={create.errors.form} />
        <Field label="Customer email" name="customer-email" type="email" value={form.email} onInput={set('email')} error={create.errors.fields.email} />
        <Field label="Customer business name" name="customer-business" value={form.business_name} onInput={set('business_name')} error={create.errors.fields.business_name} />
        <Field label="Customer country (ISO code)" name="customer-country" value={form.country_code} onInput={set('country_code')} error={create.errors.fields.country_code} />
        <button type="submit" disabled={create.busy}>Add customer</button>
      </form>
    </Section>
  );
}

function CustomerDetail({ customer }: { customer: Customer }) {
  const [links, setLinks] = useState<PartnerLink[] | null>(null);
  const [partner, setPartner] = useState('openbank');
  const link = useSubmit(() => null);
  const path = `/v1/customers/${customer.id}/partner-links`;
  const refresh = () => api<{ data: PartnerLink[] }>('GET', path).then((answer) => setLinks(answer.data));
  const pending = links?.some((l) => l.status === 'pending') ?? false;
  useEffect(() => { void refresh(); }, [customer.id]);
  // While the customer is on a consent page, the link's status is watched until it settles.
  useEffect(() => {
    if (!pending) return undefined;
    const timer = setInterval(() => void refresh(), PENDING_LINK_POLL_MS);
    return () => clearInterval(timer);
  }, [pending]);
  const active = (links ?? []).filter((l) => l.status === 'active').map((l) => l.partner);
  return (
    <>
      <Section title={`Partner links of ${customer.business_name}`}>
        {links === null ? <p>Loading…</p> : links.length === 0 ? <p>Not linked with any partner yet.</p> : (
          <ScrollTable label="Partner links" columns={['Partner', 'Status', 'Linked']}>{links.map((l) => <tr key={l.id}><td>{l.partner}</td><td>{l.status}</td><td><When at={l.linked_at} /></td></tr>)}</ScrollTable>
        )}
        <form onSubmit={(e) => {
          e.preventDefault();
          // The window opens in the click itself (browsers block one opened later); the consent page loads in it.
          const consent = window.open('about:blank', '_blank');
          void link.submit(async () => {
            try {
              const created = await api<PartnerLink>('POST', path, { partner });
              if (consent && created.authorize_url) consent.location.href = created.authorize_url;
              await refresh();
            } catch (error) {
              consent?.close();
              throw error;
            }
          });
        }}>
          <FormError message={link.errors.form} />
          <Select label="Partner" name="link-partner" value={partner} options={PARTNERS} onInput={setPartner} />
          <button type="submit" disabled={link.busy}>Link</button>
          <p class="hint">The partner's consent page opens in a new window; the link turns active here once the customer allows it.</p>
        </form>
      </Section>
      <AddFunds customer={customer} linked={active.includes('openbank')} />
      <SendPayment customerId={customer.id} linkedPartners={active.filter((p) => p !== 'openbank')} />
    </>
  );
}

interface Payment { id: string; status: string; amount: string; currency: string; claim_link: string | null }

function AddFunds({ customer, linked }: { customer: Customer; linked: boolean }) {
  const [form, setForm] = useState({ amount: '', currency: 'USD' });
  const [made, setMade] = useState<Payment | null>(null);
  const add = useSubmit();
  const set = (name: keyof typeof form) => (value: string) => setForm({ ...form, [name]: value });
  return (
    <Section title="Add funds">
      {linked ? null : <p class="hint">Link the customer with openbank first: money comes in through it.</p>}
      <form onSubmit={(e) => {
        e.preventDefault();
        void add.submit(async () => {
          setMade(await api<Payment>('POST', '/v1/payments/add-funds', { customer_id: customer.id, partner: 'openbank', amount: form.amount, currency: form.currency }));
        });
      }}>
        <FormError message={add.errors.form ?? add.errors.fields.customer_id ?? add.errors.fields.partner} />
        <Field label="Amount to add" name="add-amount" inputMode="decimal" value={form.amount} onInput={set('amount')} error={add.errors.fields.amount} />
        <Select label="Currency to add" name="add-currency" value={form.currency} options={['USD', 'EUR', 'GBP']} onInput={set('currency')} />
        <button type="submit" disabled={add.busy}>Add funds</button>
      </form>
      {made ? <p role="status" class="result">Payment of {made.amount} {made.currency}: <strong>{made.status}</strong> (see Payments)</p> : null}
    </Section>
  );
}
