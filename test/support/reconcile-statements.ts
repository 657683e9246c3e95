// The generated days of the end-to-end model test of matching (test/integration/reconciliation-model.test.ts)
// as the service sees them: movements under journal entry ids, statements as the partner exports
// them (first and again), and the lines a report names mapped back to the generated ones.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { CURRENCY_SCALE, type Amount } from '../../ledger/money';
import { uploadedLineContent } from '../../src/reconciliation/statement-csv';
import { prng } from './prng';
import type { ModelDay } from './reconcile-model';

/** The day with journal entry ids for movements (uuids), the truth rewritten to them. */
export function withUuids(day: ModelDay): ModelDay {
  const ids = new Map(day.movements.map((m) => [m.entryId, randomUUID()]));
  const owners = (owner: ModelDay['owner']) => new Map([...owner].map(([line, moves]) => [line, new Set([...moves].map((m) => ids.get(m)!))]));
  return {
    ...day,
    movements: day.movements.map((m) => ({ ...m, entryId: ids.get(m.entryId)! })),
    owner: owners(day.owner),
    early: day.early && { ...day.early, owner: owners(day.early.owner) },
  };
}

/** The generated line each uploaded line is, by the name a report gives it (its content and count in the file: statement-csv.ts). */
const generatedLineOf = new Map<string, string>();

/** Names the day's lines as the first export of its statement lists them (lines of one content are told apart by their order). */
export function nameLines(day: ModelDay): void {
  const occurrences = new Map<string, number>();
  for (const l of day.lines) {
    const scale = CURRENCY_SCALE[l.currency];
    const content = uploadedLineContent({ reference: l.reference, currency: l.currency, amount: l.amount.toFixed(scale), fee: l.fee.toFixed(scale), valueDate: l.valueDate, settles: l.settles });
    const n = (occurrences.get(content) ?? 0) + 1;
    occurrences.set(content, n);
    generatedLineOf.set(`${content}:${n}`, l.lineId);
  }
}

/**
 * The day's statement as the partner exports it: the first export in its lines' order, at their
 * scale; each later one (`export_` > 0) a re-export, as a bank gives the same day again: its own
 * line ids, its lines in another order, CRLF, amounts written short ("12.3", "100"). Lines of one
 * content keep their relative order, so each keeps its name.
 */
export function statementCsv(day: ModelDay, export_ = 0): string {
  const again = export_ > 0;
  const amount = (a: Amount) => (again ? a.toFixed() : a.toFixed(2));
  let lines = day.lines.map((l, i) => ({ l, i }));
  if (again) {
    const random = prng(day.seed * 31 + export_);
    const keys = new Map(lines.map(({ i }) => [i, random()]));
    const content = (l: ModelDay['lines'][number]) => `${l.reference}|${l.amount.toFixed(2)}|${l.fee.toFixed(2)}|${l.valueDate}|${l.settles === null}`;
    // Shuffled by content: the lines of one content move together, in their order.
    const first = new Map<string, number>();
    for (const { l, i } of lines) if (!first.has(content(l))) first.set(content(l), keys.get(i)!);
    lines = [...lines].sort((a, b) => first.get(content(a.l))! - first.get(content(b.l))! || a.i - b.i);
  }
  const rows = lines.map(({ l }) => [again ? `re${export_}-${l.lineId}` : l.lineId, l.reference ?? '', amount(l.amount), amount(l.fee), amount(l.net), l.currency, l.valueDate, (l.settles ?? []).join(' ')].join(','));
  const eol = again ? '\r\n' : '\n';
  return `id,reference,amount,fee,net,currency,value_date,settles${eol}${rows.join(eol)}${eol}`;
}

/** A CSV record's fields (the report's CSV quotes a field with a comma or quote). */
export function fields(record: string): string[] {
  const out: string[] = [];
  for (let i = 0; i <= record.length;) {
    if (record[i] === '"') {
      let value = '';
      let j = i + 1;
      for (;;) {
        const q = record.indexOf('"', j);
        value += record.slice(j, q);
        if (record[q + 1] === '"') { value += '"'; j = q + 2; } else { i = q + 2; break; }
      }
      out.push(value);
    } else {
      const comma = record.indexOf(',', i);
      out.push(record.slice(i, comma < 0 ? record.length : comma));
      i = comma < 0 ? record.length + 1 : comma + 1;
    }
  }
  return out;
}

/** A statement line id as the generated day names it. */
export const unscoped = (id: string | null) => {
  if (id === null) return null;
  const generated = generatedLineOf.get(id);
  assert.ok(generated !== undefined, `a report names a line ${id} that no statement uploaded had`);
  return generated;
};

/** The name a report gives the generated line `lineId` (what a request naming the line sends). */
export function scopedLineOf(lineId: string): string {
  const scoped = [...generatedLineOf].find(([, generated]) => generated === lineId)?.[0];
  assert.ok(scoped !== undefined, `no statement uploaded the line ${lineId}`);
  return scoped;
}
