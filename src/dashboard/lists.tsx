// Lists the way the API pages them (data, has_more, next_cursor; the next page `before` the
// cursor), a status history, times shown in the reader's own locale, and tables that fit their card.
import type { AriaRole, ComponentChildren } from 'preact';
import { useEffect, useLayoutEffect, useRef, useState } from 'preact/hooks';
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

/** A row of a FitTable: its cells in the columns' order; the first is the row's heading if `heading`. */
export interface FitRow { key: string; cells: ComponentChildren[]; heading?: boolean }

/**
 * A table that always fits its card: a table while its columns fit the card's width, and once
 * they do not (a phone, or a half-width card at 1280 px) one block per row, each value under its
 * column's name, so that nothing is cut off or hidden behind a sideways scroll. Which of the two
 * is measured, not guessed: the card's width against the width the table needs, again whenever
 * the card is resized. The column names in the blocks are for the eye; screen readers keep the
 * table's own headers (the roles are said explicitly, since a table laid out as blocks may lose them).
 */
export function FitTable({ label, columns, rows }: { label: string; columns: Column[]; rows: FitRow[] }) {
  const box = useRef<HTMLDivElement>(null);
  const needs = useRef(0);
  const [stacked, setStacked] = useState(false);
  const measure = () => {
    const element = box.current;
    const table = element?.querySelector('table');
    if (!element || !table) return;
    if (!element.classList.contains('stacked')) needs.current = table.offsetWidth;
    setStacked(needs.current > element.clientWidth + 0.5);
  };
  useLayoutEffect(measure);
  useEffect(() => {
    if (!box.current || typeof ResizeObserver === 'undefined') return undefined;
    const observer = new ResizeObserver(measure);
    observer.observe(box.current);
    return () => observer.disconnect();
  }, []);
  const role = <R extends AriaRole>(name: R): R | undefined => (stacked ? name : undefined);
  const nameOf = (column: Column) => (typeof column === 'string' ? column : column.hidden);
  return (
    <div ref={box} class={stacked ? 'fit-table stacked' : 'fit-table'} role="region" aria-label={label}>
      <table role={role('table')}>
        <thead role={role('rowgroup')}><tr role={role('row')}>{columns.map((column) => typeof column === 'string'
          ? <th scope="col" role={role('columnheader')} key={column}>{column}</th>
          : <th scope="col" role={role('columnheader')} key={column.hidden}><span class="visually-hidden">{column.hidden}</span></th>)}</tr></thead>
        <tbody role={role('rowgroup')}>{rows.map((row) => (
          <tr key={row.key} role={role('row')}>{row.cells.map((cell, i) => {
            const name = typeof columns[i] === 'string' ? <span class="cell-label" aria-hidden="true">{nameOf(columns[i])}</span> : null;
            return row.heading && i === 0
              ? <th scope="row" role={role('rowheader')} key={i}>{name}<span class="cell-value">{cell}</span></th>
              : <td role={role('cell')} key={i}>{name}<span class="cell-value">{cell}</span></td>;
          })}</tr>
        ))}</tbody>
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
