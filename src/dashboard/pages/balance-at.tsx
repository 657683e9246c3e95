// "Balance at": the balances as they were at an instant the reader picks (GET …?at=), or now. The
// field takes the reader's local date and time, sent as the ISO 8601 instant it names; the API
// judges it (an instant in the future is its 400, shown at the field).
import { useState } from 'preact/hooks';
import { ApiError } from '../api';
import { Field } from '../forms';
import { When } from '../lists';

/** `path` with `?at=` when an instant is chosen. */
export const atQuery = (path: string, at: string | null) => (at ? `${path}?at=${encodeURIComponent(at)}` : path);

/** The API's refusal of the instant (400 naming `at`), for the field; null for any other failure. */
export const atRefusal = (error: unknown) => (error instanceof ApiError && error.body.details === 'at' ? error.body.message : null);

export function BalanceAt({ name, at, onAt, error }: { name: string; at: string | null; onAt: (at: string | null) => void; error: string | null }) {
  const [typed, setTyped] = useState('');
  const [unreadable, setUnreadable] = useState<string | null>(null);
  return (
    <form class="toolbar" onSubmit={(e) => {
      e.preventDefault();
      const instant = new Date(typed);
      if (typed === '' || Number.isNaN(instant.getTime())) { setUnreadable('give a date and a time'); return; }
      setUnreadable(null);
      onAt(instant.toISOString());
    }}>
      <Field label="Balance at" name={name} type="datetime-local" step="1" value={typed} onInput={setTyped} error={unreadable ?? error} />
      <button type="submit">Show balances then</button>
      <button type="button" class="secondary" disabled={at === null && error === null} onClick={() => { setTyped(''); setUnreadable(null); onAt(null); }}>Back to now</button>
      <p role="status" class="hint">{at && !error ? <>As they were at <When at={at} />.</> : null}</p>
    </form>
  );
}
