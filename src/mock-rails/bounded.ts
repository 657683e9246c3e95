// Every table of the mock rails has a size bound (STYLE.md rule 7): the oldest entry goes first.

/** Sets `key` in `table`, then forgets the oldest entries until at most `sizeMax` remain. */
export function setBounded<V>(table: Map<string, V>, key: string, value: V, sizeMax: number): void {
  table.set(key, value);
  // Maps iterate in insertion order, so the first key is the oldest.
  while (table.size > sizeMax) table.delete(table.keys().next().value as string);
}
