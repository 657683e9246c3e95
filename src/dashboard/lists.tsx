// Lists the way the API pages them (data, has_more, next_cursor; the next page `before` the
// cursor), a status history, and times shown in the reader's own locale.
import type { ComponentChildren } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { api, type CallOptions } from './api';

export interface Page<T> { data: T[]; has_more: boolean; next_cursor: string | null }

/**
 * One page of `path` with `filters` (undefined ones left out), refetched when the filters or
 * `refreshOn` change; a new filter starts again from the first page.
 */
export function usePaged<T>(path: string | null, filters: Record<string, string | undefined> = {}, refreshOn: unknown = 0, options: CallOptions & { limit?: number } = {}) {
  const { limit = 10, ...call } = options;
  const [cursors, setCursors] = useState<string[]>([]);
  const [page, setPage] = useState<Page<T> | null>(null);
  const [error, setError] = useState<string | null>(null);
  const filterKey = JSON.stringify(filters);
  useEffect(() => setCursors([]), [path, filterKey]);
  const before = cursors[cursors.length - 1];
  useEffect(() => {
    if (path === null) return;
    const query = new URLSearchParams({ limit: String(limit) });
    for (const [name, value] of Object.entries(filters)) if (value !== undefined && value !== '') query.set(name, value);
    if (before) query.set('before', before);
    let current = true;
    api<Page<T>>('GET', `${path}?${query}`, undefined, call).then(
      (answer) => { if (current) { setPage(answer); setError(null); } },
      (failure: Error) => { if (current) { setPage({ data: [], has_more: false, next_cursor: null }); setError(failure.message); } },
    );
    return () => { current = false; };
  }, [path, filterKey, before, refreshOn, call.credential]);
  const pager = (
    <div class="pager">
      <button type="button" disabled={cursors.length === 0} onClick={() => setCursors(cursors.slice(0, -1))}>Previous page</button>
      <button type="button" disabled={!page?.has_more} onClick={() => page?.next_cursor && setCursors([...cursors, page.next_cursor])}>Next page</button>
    </div>
  );
  return { page, error, pager };
}

export function When({ at }: { at: string | null }) {
  return at ? <time dateTime={at}>{new Date(at).toLocaleString()}</time> : <span class="hint">—</span>;
}

export interface StatusChange { from: string | null; to: string; at: string }

export function StatusHistory({ history }: { history: StatusChange[] }) {
  return (
    <ol class="history" aria-label="Status history">
      {history.map((change) => <li key={`${change.to}-${change.at}`}><strong>{change.to}</strong> <When at={change.at} /></li>)}
    </ol>
  );
}

/** A column heading; `{ hidden }` names a column of buttons for screen readers only. */
export type Column = string | { hidden: string };

/**
 * A table under `columns` that scrolls sideways inside its card on a narrow screen, reachable
 * and named for the keyboard and screen readers; `children` are its rows.
 */
export function ScrollTable({ label, columns, children }: { label: string; columns: Column[]; children: ComponentChildren }) {
  return (
    <div class="table-scroll" tabIndex={0} role="region" aria-label={label}>
      <table>
        <thead><tr>{columns.map((column) => typeof column === 'string'
          ? <th scope="col" key={column}>{column}</th>
          : <th scope="col" key={column.hidden}><span class="visually-hidden">{column.hidden}</span></th>)}</tr></thead>
        <tbody>{children}</tbody>
      </table>
    </div>
  );
}

/** `path` as the API answers it, read again when `refreshOn` changes; null until it answers. */
export function useFetched<T>(path: string, refreshOn: unknown): T | null {
  const [value, setValue] = useState<T | null>(null);
  useEffect(() => {
    let current = true;
    api<T>('GET', path).then((answer) => { if (current) setValue(answer); }, () => undefined);
    return () => { current = false; };
  }, [path, refreshOn]);
  return value;
}
