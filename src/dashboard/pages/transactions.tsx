// Transactions: the account's ledger records, newest first (GET /v1/transactions), filtered by
// currency, UTC days (from, to: that day included) and a metadata key and value of the transfer
// or payment a record belongs to, a page at a time; the filters combine and page with the cursor.
import { useState } from 'preact/hooks';
import { Field, FormError, Section, Select } from '../forms';
import { usePaged, When } from '../lists';
import { CURRENCIES } from './overview';

const ANY_CURRENCY = [{ value: '', label: 'Any currency' }, ...CURRENCIES];

interface Transaction { id: string; type: string; direction: 'credit' | 'debit'; amount: string; currency: string; status: string; created_at: string }
interface Filters { currency: string; from: string; to: string; key: string; value: string }

/** The filters as the route takes them: a metadata pair only once both halves are given. */
function queryOf(filters: Filters): Record<string, string | undefined> {
  const key = filters.key.trim();
  return {
    currency: filters.currency || undefined, from: filters.from || undefined, to: filters.to || undefined,
    ...(key && filters.value !== '' ? { [`metadata[${key}]`]: filters.value } : {}),
  };
}

export function Transactions() {
  const [filters, setFilters] = useState<Filters>({ currency: '', from: '', to: '', key: '', value: '' });
  const query = queryOf(filters);
  const { page, error, pager } = usePaged<Transaction>('/v1/transactions', query);
  const set = (name: keyof Filters) => (value: string) => setFilters({ ...filters, [name]: value });
  const filtered = Object.values(query).some((value) => value !== undefined);
  return (
    <Section title="Transactions">
      <div class="filters" role="group" aria-label="Filter the transactions">
        <Select label="Transactions in currency" name="transactions-currency" value={filters.currency} options={ANY_CURRENCY} onInput={set('currency')} />
        <Field label="Transactions from (UTC day)" name="transactions-from" type="date" required={false} value={filters.from} onInput={set('from')} />
        <Field label="Transactions to (UTC day)" name="transactions-to" type="date" required={false} value={filters.to} onInput={set('to')} />
        <Field label="Metadata key" name="transactions-metadata-key" required={false} autoComplete="off" value={filters.key} onInput={set('key')} />
        <Field label="Metadata value" name="transactions-metadata-value" required={false} autoComplete="off" value={filters.value} onInput={set('value')} />
      </div>
      <FormError message={error} />
      {page === null ? <p>Loading…</p> : page.data.length === 0 ? <p>{filtered ? 'No transactions match these filters.' : 'No transactions yet.'}</p> : (
        // A list, not a table: each movement's line wraps in the narrowest card.
        <ol class="history" aria-label="Transactions list">{page.data.map((t) => (
          <li key={t.id}>
            <When at={t.created_at} />{' '}{t.type.replace(/_/g, ' ')}{t.status === 'completed' ? '' : ` (${t.status})`}{' '}
            <strong class="amount">{t.direction === 'debit' ? '−' : '+'}{t.amount} {t.currency}</strong>
          </li>
        ))}</ol>
      )}
      {pager}
    </Section>
  );
}
