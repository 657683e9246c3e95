// A partner's daily settlement statement: what it settled with the client on one value date, as
// a real partner publishes it for the client's finance team. It lists every movement on the
// client's accounts with the partner: the payments its customers made through their partner links
// (pay-ins credited to the client, payouts debited) and the transfers the client sends under its
// own credentials (payouts, debited; `client_reference` is the transfer's id), and the returns of
// them (credited back; `client_reference` is the reversal's id, `returns` the payment returned).
// The statement scenarios (src/partners/scenarios.ts) make it disagree with the payments on purpose.
import BigNumber from 'bignumber.js';
import { RailError } from './http';
import { PAY_IN_CURRENCIES, type PartnerSlug } from '../partners/registry';
import { STATEMENT_FEE, STATEMENT_LATE_DAYS } from '../partners/scenarios';
import { currencyScale, type PartnerProfile } from './partners';
import type { PaymentBook, SettledCursor, SettledPayment, StatementDay } from './payments';

const DAY_MS = 24 * 60 * 60 * 1000;
const ISO_DATE = /^\d{4}-\d{2}-\d{2}$/;

export type StatementLineType = 'pay_in' | 'payout' | 'return' | 'batch';

export interface StatementLine {
  id: string;
  type: StatementLineType;
  /** The partner's payment id (a batch line: the batch's own reference). */
  reference: string;
  /** The client's reference the payment was submitted with; null on a batch line. */
  client_reference: string | null;
  /** Signed: positive credits the client (a pay-in, a payout's return), negative debits it (a payout, a pay-in's return). */
  amount: string;
  /** What the partner kept, never negative. */
  fee: string;
  /** amount − fee: what the client's balance with the partner moved by. */
  net: string;
  currency: string;
  value_date: string;
  /** A return line: the partner's id of the payment it gives back part of. */
  returns?: string;
  /** A batch line: how many payments it settles. */
  batch_size?: number;
  /** A batch line: the partner's payment ids it settles, as a settlement detail lists them. */
  settles?: string[];
}

export interface Statement {
  partner: PartnerSlug;
  date: string;
  /** False while the day has not ended: lines may still be added. */
  final: boolean;
  lines: StatementLine[];
}

/** A page of a statement: `next_cursor` asks for the next one; null on the last. */
export interface StatementPage extends Statement { next_cursor: string | null }

/** Start of the UTC day `date` (YYYY-MM-DD), or a 400 for anything else. */
function dayStartMs(date: string): number {
  const ms = ISO_DATE.test(date) ? Date.parse(`${date}T00:00:00.000Z`) : Number.NaN;
  if (!Number.isFinite(ms) || new Date(ms).toISOString().slice(0, 10) !== date) {
    throw new RailError(400, 'invalid_request', 'the statement date must be a calendar date, YYYY-MM-DD');
  }
  return ms;
}

/** The line of a payment settled on value date `date`. */
function paymentLine(profile: PartnerProfile, payment: SettledPayment, date: string): StatementLine {
  const scale = currencyScale(payment.currency);
  const payIn = PAY_IN_CURRENCIES[profile.slug] !== undefined;
  // A return moves the money the other way from the payment it returns.
  const credit = payIn === (payment.returns === null);
  const fee = payment.scenario === 'statement_fee' ? STATEMENT_FEE : '0';
  const dot = payment.amount.indexOf('.');
  // Most lines: the amount as it was made, nothing kept, so no arithmetic for 100,000 of them.
  const asMade = fee === '0' && dot >= 0 && payment.amount.length - dot - 1 === scale;
  const amount = asMade ? (credit ? payment.amount : `-${payment.amount}`) : new BigNumber(payment.amount).times(credit ? 1 : -1).toFixed(scale);
  return {
    id: `stl_${payment.id}`, type: payment.returns !== null ? 'return' : payIn ? 'pay_in' : 'payout', reference: payment.id, client_reference: payment.reference,
    amount, fee: asMade ? `0.${'0'.repeat(scale)}` : new BigNumber(fee).toFixed(scale), net: asMade ? amount : new BigNumber(amount).minus(fee).toFixed(scale),
    currency: payment.currency, value_date: date, ...(payment.returns !== null ? { returns: payment.returns } : {}),
  };
}

/** One line per batch of statement_batched payments of the same currency and direction. */
function batchLines(profile: PartnerProfile, date: string, lines: StatementLine[]): StatementLine[] {
  const batches = new Map<string, StatementLine[]>();
  for (const line of lines) {
    const key = `${line.currency}_${line.type}`;
    const members = batches.get(key);
    if (members) members.push(line);
    else batches.set(key, [line]);
  }
  return [...batches].map(([key, members]) => {
    const scale = currencyScale(members[0].currency);
    const sum = (field: 'amount' | 'fee' | 'net') => members.reduce((total, m) => total.plus(m[field]), new BigNumber(0)).toFixed(scale);
    return {
      id: `stl_batch_${date}_${key}`, type: 'batch', reference: `batch_${profile.slug}_${date}_${key}`, client_reference: null,
      amount: sum('amount'), fee: sum('fee'), net: sum('net'), currency: members[0].currency, value_date: date, batch_size: members.length,
      settles: members.map((m) => m.reference),
    };
  });
}

/** Lines of a page when none is asked for: the whole statement is read a page at a time. */
const WHOLE_PAGE_LINES = 10_000;

/** The statement of value date `date`, whole. */
export async function dailyStatement(profile: PartnerProfile, book: PaymentBook, date: string, nowMs: number): Promise<Statement> {
  const lines: StatementLine[] = [];
  let page = await statementPage(profile, book, date, nowMs, WHOLE_PAGE_LINES, null);
  for (lines.push(...page.lines); page.next_cursor !== null; lines.push(...page.lines)) {
    page = await statementPage(profile, book, date, nowMs, WHOLE_PAGE_LINES, page.next_cursor);
  }
  return { partner: profile.slug, date, final: page.final, lines };
}

// A page goes on after the last payment it listed (its settlement instant and id), or, once the
// payments are listed, from the n-th batch line.
const PAYMENT_CURSOR = /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z)_(.{1,200})$/;
const BATCH_CURSOR = /^batch_(\d{1,6})$/;
const paymentCursor = (payment: SettledPayment) => `${payment.settled_at}_${payment.id}`;

function parseCursor(cursor: string | null): { after: SettledCursor | null; batchFrom: number | null } {
  if (cursor === null) return { after: null, batchFrom: null };
  const payment = PAYMENT_CURSOR.exec(cursor);
  if (payment) return { after: { settledAt: payment[1], id: payment[2] }, batchFrom: null };
  const batch = BATCH_CURSOR.exec(cursor);
  if (batch) return { after: null, batchFrom: Number(batch[1]) };
  throw new RailError(400, 'invalid_request', 'cursor must be a next_cursor this route gave');
}

/**
 * A page of the statement of value date `date`: at most `limit` lines (a payment's two lines in
 * the duplicate scenario are never split, so a page of one line can hold two), the payments in
 * settlement order, then the batch lines. Read from the book a page at a time: however busy the
 * day, the partner holds one page (and the references its batch lines list).
 */
export async function statementPage(profile: PartnerProfile, book: PaymentBook, date: string, nowMs: number, limit: number, cursor: string | null): Promise<StatementPage> {
  const startMs = dayStartMs(date);
  const { after, batchFrom } = parseCursor(cursor);
  const lateFromMs = startMs - STATEMENT_LATE_DAYS * DAY_MS;
  const day: StatementDay = { fromMs: startMs, toMs: startMs + DAY_MS, late: { scenario: 'statement_late', fromMs: lateFromMs, toMs: lateFromMs + DAY_MS } };
  const page: StatementPage = { partner: profile.slug, date, final: nowMs >= startMs + DAY_MS, lines: [], next_cursor: null };
  if (batchFrom === null) {
    const payments = await book.settledPage(day, after, limit);
    for (const [i, payment] of payments.entries()) {
      const line = paymentLine(profile, payment, date);
      const lines = payment.scenario === 'statement_duplicate' ? [line, { ...line, id: `${line.id}_2` }] : [line];
      if (i > 0 && page.lines.length + lines.length > limit) {
        page.next_cursor = paymentCursor(payments[i - 1]);
        return page;
      }
      page.lines.push(...lines);
    }
    if (payments.length === limit) {
      page.next_cursor = paymentCursor(payments[payments.length - 1]);
      return page;
    }
  }
  const batches = batchLines(profile, date, (await book.settledInBatches(day)).map((payment) => paymentLine(profile, payment, date)));
  const from = batchFrom ?? 0;
  const shown = batches.slice(from, from + Math.max(0, limit - page.lines.length));
  page.lines.push(...shown);
  if (from + shown.length < batches.length) page.next_cursor = `batch_${from + shown.length}`;
  return page;
}
