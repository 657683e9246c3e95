// Webhook endpoints: create one (its signing secret is shown once), send it a test event, and
// follow its deliveries with every attempt (status, answer, time), replaying any of them.
import { useEffect, useState } from 'preact/hooks';
import { api } from '../api';
import type { DomainEvent } from '../events';
import { Field, FormError, Section, ShownOnce, useSubmit } from '../forms';
import { usePaged, When } from '../lists';

interface Endpoint { id: string; url: string; description: string | null; events: string[]; enabled: boolean; disabled_reason: string | null; created_at: string }
interface Attempt { attempt: number; started_at: string; duration_ms: number; response_status: number | null; response_body: string | null; error: string | null }
interface Delivery { id: string; event_type: string; status: string; attempt_count: number; created_at: string; delivered_at: string | null; next_attempt_at: string | null; attempts: Attempt[] }
/** While any delivery is pending, its attempts are read again this often. */
const PENDING_DELIVERY_POLL_MS = 1000;

export function Webhooks({ events }: { events: DomainEvent[] }) {
  const [changes, setChanges] = useState(0);
  const [chosen, setChosen] = useState<string | null>(null);
  const [secret, setSecret] = useState<string | null>(null);
  const { page, error, pager } = usePaged<Endpoint>('/v1/webhooks', {}, changes);
  return (
    <>
      <Section title="Webhook endpoints">
        <FormError message={error} />
        {page === null ? <p>Loading…</p> : page.data.length === 0 ? <p>No endpoints yet: add one below to receive the account's events.</p> : (
          <ul class="choices">
            {page.data.map((endpoint) => (
              <li key={endpoint.id}>
                <button type="button" class="link" aria-pressed={chosen === endpoint.id} onClick={() => setChosen(endpoint.id)}>{endpoint.url}</button>
                {' '}<span class="hint">{endpoint.enabled ? 'enabled' : `disabled${endpoint.disabled_reason ? `: ${endpoint.disabled_reason}` : ''}`}</span>
              </li>
            ))}
          </ul>
        )}
        {pager}
      </Section>
      {secret ? (
        <ShownOnce title="Signing secret" intro="Copy it now: it is shown only once. Check each delivery's signature with it." secret={secret} copyLabel="Copy signing secret" onDone={() => setSecret(null)} />
      ) : (
        <NewEndpoint onCreated={(endpoint, created) => { setSecret(created); setChosen(endpoint.id); setChanges((n) => n + 1); }} />
      )}
      {chosen ? <Deliveries key={chosen} endpointId={chosen} refreshOn={events.length} /> : null}
    </>
  );
}

function NewEndpoint({ onCreated }: { onCreated: (endpoint: Endpoint, secret: string) => void }) {
  const [form, setForm] = useState({ url: '', description: '' });
  const create = useSubmit();
  return (
    <Section title="Add an endpoint">
      <form onSubmit={(e) => {
        e.preventDefault();
        void create.submit(async () => {
          const created = await api<Endpoint & { secret: string }>('POST', '/v1/webhooks', { url: form.url, ...(form.description ? { description: form.description } : {}) });
          onCreated(created, created.secret);
          setForm({ url: '', description: '' });
        });
      }}>
        <FormError message={create.errors.form} />
        <Field label="Endpoint URL" name="webhook-url" type="url" value={form.url} onInput={(url) => setForm({ ...form, url })} error={create.errors.fields.url} />
        <Field label="Description" name="webhook-description" value={form.description} required={false} onInput={(description) => setForm({ ...form, description })} error={create.errors.fields.description} />
        <button type="submit" disabled={create.busy}>Add endpoint</button>
      </form>
    </Section>
  );
}

function Deliveries({ endpointId, refreshOn }: { endpointId: string; refreshOn: number }) {
  const [ticks, setTicks] = useState(0);
  const action = useSubmit(() => null);
  const { page, error, pager } = usePaged<Delivery>(`/v1/webhooks/${endpointId}/deliveries`, {}, `${refreshOn}-${ticks}`);
  const pending = page?.data.some((d) => d.status === 'pending') ?? false;
  useEffect(() => {
    if (!pending) return undefined;
    const timer = setTimeout(() => setTicks((n) => n + 1), PENDING_DELIVERY_POLL_MS);
    return () => clearTimeout(timer);
  }, [pending, page]);
  const post = (path: string) => void action.submit(async () => { await api('POST', path); setTicks((n) => n + 1); });
  return (
    <Section title="Deliveries">
      <p><button type="button" disabled={action.busy} onClick={() => post(`/v1/webhooks/${endpointId}/test`)}>Send test event</button></p>
      <FormError message={error ?? action.errors.form} />
      {page === null ? <p>Loading…</p> : page.data.length === 0 ? <p>Nothing delivered yet: events of the account arrive here, or send a test event.</p> : (
        <ol class="deliveries" aria-label="Deliveries list">
          {page.data.map((delivery) => (
            <li key={delivery.id}>
              <p>
                <span class="event-type">{delivery.event_type}</span> <strong>{delivery.status}</strong> · <When at={delivery.created_at} />
                {' '}<button type="button" class="link" disabled={action.busy} aria-label={`Replay the ${delivery.event_type} delivery`} onClick={() => post(`/v1/webhooks/${endpointId}/deliveries/${delivery.id}/retry`)}>Replay</button>
              </p>
              <ul aria-label={`Attempts of the ${delivery.event_type} delivery`}>
                {delivery.attempts.map((attempt) => (
                  <li key={attempt.attempt}>
                    Attempt {attempt.attempt}: {attempt.response_status === null ? `no answer (${attempt.error ?? 'unknown'})` : `answered ${attempt.response_status}`}
                    {' '}in {attempt.duration_ms} ms, <When at={attempt.started_at} />
                  </li>
                ))}
              </ul>
            </li>
          ))}
        </ol>
      )}
      {pager}
    </Section>
  );
}
