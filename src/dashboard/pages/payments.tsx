// Payments: the account's payments through partners (money in and out), by status, a page at a
// time, and one payment's status history and claim link. A payment event refreshes both.
import { useState } from 'preact/hooks';
import type { DomainEvent } from '../events';
import { FormError, Section, Select } from '../forms';
import { ScrollTable, useFetched, type StatusChange, StatusHistory, usePaged, When } from '../lists';

interface Payment {
  id: string; partner: string; kind: string; direction: string; amount: string; currency: string; status: string;
  claim_link: string | null; failure: { code: string; message: string | null } | null; created_at: string;
}
interface PaymentWithHistory extends Payment { status_history: StatusChange[] }
const STATUSES = ['all', 'pending', 'sent', 'authorized', 'completed', 'failed', 'cancelled'];

export function Payments({ events }: { events: DomainEvent[] }) {
  const [status, setStatus] = useState('all');
  const [shown, setShown] = useState<string | null>(null);
  const refreshOn = events.filter((e) => e.resource_type === 'payment').length;
  const { page, error, pager } = usePaged<Payment>('/v1/payments', { status: status === 'all' ? undefined : status }, refreshOn);
  return (
    <>
      <Section title="Payments">
        <Select label="Status" name="payment-status" value={status} options={STATUSES} onInput={setStatus} />
        <FormError message={error} />
        {page === null ? <p>Loading…</p> : page.data.length === 0 ? <p>No payments{status === 'all' ? '' : ` ${status}`} yet: customers add funds and send from Customers.</p> : (
          <ScrollTable label="Payments list" columns={['Created', 'Partner', 'Kind', 'Amount', 'Status', { hidden: 'Details' }]}>{page.data.map((p) => (
                <tr key={p.id}>
                  <td><When at={p.created_at} /></td><td>{p.partner}</td><td>{p.kind}</td>
                  <td class="amount">{p.amount} {p.currency}</td><td>{p.status}</td>
                  <td><button type="button" class="link" aria-label={`Details of the ${p.kind} payment of ${p.amount} ${p.currency}`} onClick={() => setShown(p.id)}>Details</button></td>
                </tr>
              ))}</ScrollTable>
        )}
        {pager}
      </Section>
      {shown ? <PaymentDetail id={shown} refreshOn={refreshOn} /> : null}
    </>
  );
}

function PaymentDetail({ id, refreshOn }: { id: string; refreshOn: number }) {
  const payment = useFetched<PaymentWithHistory>(`/v1/payments/${id}`, refreshOn);
  return (
    <Section title="Payment details">
      {payment === null ? <p>Loading…</p> : (
        <>
          <dl class="facts">
            <dt>Id</dt><dd><code>{payment.id}</code></dd>
            <dt>Amount</dt><dd class="amount">{payment.amount} {payment.currency}</dd>
            <dt>Partner</dt><dd>{payment.partner} ({payment.direction})</dd>
            <dt>Status</dt><dd>{payment.status}</dd>
            {payment.failure ? <><dt>Failure</dt><dd>{payment.failure.message ?? payment.failure.code}</dd></> : null}
            {payment.claim_link ? <><dt>Claim link</dt><dd><a href={payment.claim_link} target="_blank" rel="noopener noreferrer">Open the payee's claim page</a></dd></> : null}
          </dl>
          <h3>Status history</h3>
          <StatusHistory history={payment.status_history} />
        </>
      )}
    </Section>
  );
}
