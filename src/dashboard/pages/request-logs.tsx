// Request logs: every request the account made (method, path, status, time), filtered by status
// class, and one request's full bodies as the log stored them (secrets redacted before storing).
import { useEffect, useState } from 'preact/hooks';
import { api } from '../api';
import { FormError, Section, Select } from '../forms';
import { ScrollTable, usePaged, When } from '../lists';

interface RequestLog {
  id: string; method: string; path: string; query: string; status: number; duration_ms: string; created_at: string;
  idempotency_key: string | null; request_body: unknown; response_body: unknown; error_code: string | null; truncated: boolean;
}
const CLASSES = ['all', '2xx', '4xx', '5xx'];

export function RequestLogs() {
  const [statusClass, setStatusClass] = useState('all');
  const [shown, setShown] = useState<string | null>(null);
  const [reloads, setReloads] = useState(0);
  const { page, error, pager } = usePaged<RequestLog>('/v1/request-logs', { status: statusClass === 'all' ? undefined : statusClass }, reloads);
  return (
    <>
      <Section title="Request logs">
        <div class="toolbar">
          <Select label="Status class" name="log-status" value={statusClass} options={CLASSES} onInput={setStatusClass} />
          <button type="button" onClick={() => setReloads((n) => n + 1)}>Refresh logs</button>
        </div>
        <FormError message={error} />
        {page === null ? <p>Loading…</p> : page.data.length === 0 ? <p>No requests{statusClass === 'all' ? '' : ` answered ${statusClass}`} yet.</p> : (
          <ScrollTable label="Request logs list" columns={['Time', 'Method', 'Path', 'Status', { hidden: 'Bodies' }]}>{page.data.map((log) => (
                <tr key={log.id}>
                  <td><When at={log.created_at} /></td><td>{log.method}</td><td><code>{log.path}</code></td>
                  <td class={log.status >= 400 ? 'bad' : undefined}>{log.status}</td>
                  <td><button type="button" class="link" aria-label={`Bodies of ${log.method} ${log.path} answered ${log.status}`} onClick={() => setShown(log.id)}>Bodies</button></td>
                </tr>
              ))}</ScrollTable>
        )}
        {pager}
      </Section>
      {shown ? <RequestLogDetail id={shown} /> : null}
    </>
  );
}

const asText = (body: unknown) => (body === null || body === undefined ? '(none)' : typeof body === 'string' ? body : JSON.stringify(body, null, 2));

function RequestLogDetail({ id }: { id: string }) {
  const [log, setLog] = useState<RequestLog | null>(null);
  useEffect(() => { void api<RequestLog>('GET', `/v1/request-logs/${id}`).then(setLog); }, [id]);
  return (
    <Section title="Request">
      {log === null ? <p>Loading…</p> : (
        <>
          <p><code>{log.method} {log.path}{log.query ? `?${log.query}` : ''}</code> answered <strong>{log.status}</strong>{log.error_code ? ` (${log.error_code})` : ''} in {log.duration_ms} ms</p>
          {log.truncated ? <p class="hint">A body was cut to its start when stored.</p> : null}
          <h3>Request body</h3>
          <pre class="body" tabIndex={0} aria-label="Request body">{asText(log.request_body)}</pre>
          <h3>Response body</h3>
          <pre class="body" tabIndex={0} aria-label="Response body">{asText(log.response_body)}</pre>
        </>
      )}
    </Section>
  );
}
