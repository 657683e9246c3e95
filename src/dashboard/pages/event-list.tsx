// The account's events (GET /v1/events), newest first, of one type on request: what the stream
// and the webhooks delivered, each with its full body.
import { useState } from 'preact/hooks';
import type { DomainEvent } from '../events';
import { Field, FormError, Section } from '../forms';
import { usePaged, When } from '../lists';

export function EventList({ events }: { events: DomainEvent[] }) {
  const [typed, setTyped] = useState('');
  const [type, setType] = useState('');
  const { page, error, pager } = usePaged<DomainEvent & { account_seq: number }>('/v1/events', { type: type || undefined }, events.length);
  return (
    <Section title="Events">
      <form class="toolbar" onSubmit={(e) => { e.preventDefault(); setType(typed.trim()); }}>
        <Field label="Event type (such as transfer.completed)" name="event-type" value={typed} required={false} onInput={setTyped} />
        <button type="submit">Filter events</button>
      </form>
      <FormError message={error} />
      {page === null ? <p>Loading…</p> : page.data.length === 0 ? <p>No events{type ? ` of type ${type}` : ''} yet.</p> : (
        <ol class="event-list" aria-label="Events list">
          {page.data.map((event) => (
            <li key={event.id}>
              <details>
                <summary><span class="event-type">{event.type}</span> #{event.account_seq} · <When at={event.created_at} /></summary>
                <pre class="body" tabIndex={0} aria-label={`Body of event ${event.id}`}>{JSON.stringify(event, null, 2)}</pre>
              </details>
            </li>
          ))}
        </ol>
      )}
      {pager}
    </Section>
  );
}
