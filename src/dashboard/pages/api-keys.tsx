// API keys: create one with its type and, for a restricted key, its scopes (the key is shown once,
// with a copy button); revoke one, after which the API refuses it. The scopes a key can hold are
// read from the API's own document, so the form offers exactly what the API accepts.
import { useEffect, useState } from 'preact/hooks';
import { api } from '../api';
import { Field, FormError, Section, Select, ShownOnce, useSubmit } from '../forms';
import { ScrollTable, usePaged, When } from '../lists';

interface ApiKey { id: string; type: string; name: string | null; key_hint: string; scopes: string[]; revoked_at: string | null; created_at: string }
interface Document { paths: Record<string, { post?: { requestBody?: { content: { 'application/json': { schema: { properties: { scopes: { items: { enum: string[] } } } } } } } } }> }

function useScopes(): string[] {
  const [scopes, setScopes] = useState<string[]>([]);
  useEffect(() => {
    void api<Document>('GET', '/v1/openapi.json').then((document) => {
      setScopes(document.paths['/v1/api-keys']?.post?.requestBody?.content['application/json'].schema.properties.scopes.items.enum ?? []);
    });
  }, []);
  return scopes;
}

export function ApiKeys() {
  const [changes, setChanges] = useState(0);
  const [created, setCreated] = useState<(ApiKey & { key: string }) | null>(null);
  const { page, error, pager } = usePaged<ApiKey>('/v1/api-keys', {}, changes);
  const revoke = useSubmit(() => null);
  return (
    <>
      <Section title="API keys">
        <FormError message={error ?? revoke.errors.form} />
        {page === null ? <p>Loading…</p> : page.data.length === 0 ? <p>No API keys yet.</p> : (
          <ScrollTable label="API keys list" columns={['Name', 'Type', 'Key', 'Scopes', 'Created', 'State']}>{page.data.map((k) => (
                <tr key={k.id}>
                  <td>{k.name ?? <span class="hint">unnamed</span>}</td><td>{k.type}</td><td><code>{k.key_hint}</code></td>
                  <td>{k.scopes.join(', ') || <span class="hint">all</span>}</td><td><When at={k.created_at} /></td>
                  <td>{k.revoked_at ? 'revoked' : (
                    <button type="button" class="link" aria-label={`Revoke ${k.name ?? k.key_hint}`} disabled={revoke.busy} onClick={() => {
                      if (!confirm(`Revoke the key ${k.key_hint}? Requests made with it are refused from now on.`)) return;
                      void revoke.submit(async () => { await api('DELETE', `/v1/api-keys/${k.id}`); setChanges((n) => n + 1); });
                    }}>Revoke</button>
                  )}</td>
                </tr>
              ))}</ScrollTable>
        )}
        {pager}
      </Section>
      {created ? <ShownOnce title="Your new key" intro="Copy it now: it is shown only once." secret={created.key} copyLabel="Copy key" onDone={() => setCreated(null)} /> : <NewKey onCreated={(key) => { setCreated(key); setChanges((n) => n + 1); }} />}
    </>
  );
}

function NewKey({ onCreated }: { onCreated: (key: ApiKey & { key: string }) => void }) {
  const scopes = useScopes();
  const [form, setForm] = useState({ name: '', type: 'secret' });
  const [chosen, setChosen] = useState<string[]>([]);
  const create = useSubmit();
  return (
    <Section title="Create an API key">
      <form onSubmit={(e) => {
        e.preventDefault();
        void create.submit(async () => {
          const body = { type: form.type, ...(form.name ? { name: form.name } : {}), ...(form.type === 'restricted' ? { scopes: chosen } : {}) };
          onCreated(await api<ApiKey & { key: string }>('POST', '/v1/api-keys', body));
        });
      }}>
        <FormError message={create.errors.form ?? create.errors.fields.type} />
        <Field label="Key name" name="key-name" value={form.name} required={false} onInput={(name) => setForm({ ...form, name })} error={create.errors.fields.name} />
        <Select label="Key type" name="key-type" value={form.type} options={['secret', 'publishable', 'restricted']} onInput={(type) => setForm({ ...form, type })} />
        {form.type === 'restricted' ? (
          <fieldset class="scopes" aria-describedby={create.errors.fields.scopes ? 'scopes-error' : undefined}>
            <legend>Scopes</legend>
            {scopes.map((scope) => (
              <label key={scope} class="check">
                <input type="checkbox" checked={chosen.includes(scope)} onChange={(e) => setChosen((e.target as HTMLInputElement).checked ? [...chosen, scope] : chosen.filter((s) => s !== scope))} /> {scope}
              </label>
            ))}
            {create.errors.fields.scopes ? <p id="scopes-error" class="field-error">{create.errors.fields.scopes}</p> : null}
          </fieldset>
        ) : null}
        <button type="submit" disabled={create.busy}>Create key</button>
      </form>
    </Section>
  );
}
