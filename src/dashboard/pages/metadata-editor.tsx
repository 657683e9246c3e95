// An object's metadata (DESIGN.md section 5h), shown as its keys and values, and changed through
// the object's PATCH route one key at a time: a key set (added, or its value changed) from the form,
// or removed with its row's button (the key set to null). Each change goes under an
// Idempotency-Key kept until it is decided, so pressing again after a lost answer does it once.
import { useRef, useState } from 'preact/hooks';
import { ledgerWrite, RetryKeys } from '../api';
import { Field, FormError, useSubmit } from '../forms';
import { FitTable } from '../lists';

const KEY_LENGTH_MAX = 40;

export function MetadataEditor({ path, metadata, what, onChanged }: { path: string; metadata: Record<string, string>; what: string; onChanged: () => void }) {
  const [form, setForm] = useState({ key: '', value: '' });
  const [done, setDone] = useState<string | null>(null);
  const keys = useRef(new RetryKeys());
  // The API names the key at fault (metadata.<key>) whichever rule it broke: a key past its length
  // is the key field's error, anything else the value's.
  const keyTooLong = [...form.key.trim()].length > KEY_LENGTH_MAX;
  const change = useSubmit((details) => (details?.startsWith('metadata.') ? (keyTooLong ? 'key' : 'value') : null));
  const patch = (changes: Record<string, string | null>, said: string, then?: () => void) => change.submit(async () => {
    setDone(null);
    await ledgerWrite<{ status: string }>(keys.current, path, { metadata: changes }, 'PATCH');
    setDone(said);
    then?.();
    onChanged();
  });
  const entries = Object.entries(metadata).sort(([a], [b]) => a.localeCompare(b));
  const heading = `${what}-metadata-heading`;
  return (
    <>
      <h3 id={heading}>Metadata</h3>
      {entries.length === 0 ? <p>None.</p> : (
        <FitTable label={`Metadata of the ${what}`} columns={['Key', 'Value', { hidden: 'Remove' }]} rows={entries.map(([key, value]) => ({
          key, heading: true,
          cells: [<code>{key}</code>, value, <button type="button" class="link" aria-label={`Remove the key ${key}`} disabled={change.busy} onClick={() => { void patch({ [key]: null }, `Removed ${key}.`); }}>Remove</button>],
        }))} />
      )}
      <form aria-labelledby={heading} onSubmit={(e) => {
        e.preventDefault();
        const key = form.key.trim();
        void patch({ [key]: form.value }, `Saved ${key}.`, () => setForm({ key: '', value: '' }));
      }}>
        <FormError message={change.errors.form} />
        <Field label="Key (1 to 40 characters)" name={`${what}-metadata-key`} value={form.key} onInput={(key) => setForm({ ...form, key })} error={change.errors.fields.key} />
        <Field label="Value (up to 500 characters)" name={`${what}-metadata-value`} value={form.value} onInput={(value) => setForm({ ...form, value })} error={change.errors.fields.value} required={false} />
        <p><button type="submit" disabled={change.busy}>Save key</button></p>
        {done ? <p role="status" class="result">{done}</p> : null}
      </form>
    </>
  );
}
