// A partner's daily settlement statement: what it settled with the client on one value date, as
// a real partner publishes it for the client's finance team. It lists the payments the client's
// customers made through their partner links (pay-ins credited to the client, payouts debited);
// transfers the client submits under its own credentials move between two accounts of the client's
// and settle on-us, so they are not on it. The statement scenarios (src/partners/scenarios.ts) make
// it disagree with the payments on purpose.
import BigNumber from 'bignumber.js';
import { RailError } from './http';
import { CLIENT_USER_ID } from './oauth';
import { PAY_IN_CURRENCIES, type PartnerSlug } from '../partners/registry';
import { STATEMENT_FEE, STATEMENT_LATE_DAYS } from '../partners/scenarios';
import { currencyScale, type PartnerProfile } from './partners';
import type { PaymentBook, SettledPayment } from './payments';

const DAY_MS = 24 * 60 * 60 * 1000;
const ISO_DATE = /^\d{4}-\d{2}-\d{2}$/;

export type StatementLineType = 'pay_in' | 'payout' | 'batch';

export interface StatementLine {
  id: string;
  type: StatementLineType;
  /** The partner's payment id (a batch line: the batch's own reference). */
  reference: string;
  /** The client's reference the payment was submitted with; null on a batch line. */
  client_reference: string | null;
  /** Signed: positive credits the client (a pay-in), negative debits it (a payout). */
  amount: string;
  /** What the partner kept, never negative. */
  fee: string;
  /** amount − fee: what the client's balance with the partner moved by. */
  net: string;
  currency: string;
  value_date: string;
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

/** Start of the UTC day `date` (YYYY-MM-DD), or a 400 for anything else. */
function dayStartMs(date: string): number {
  const ms = ISO_DATE.test(date) ? Date.parse(`${date}T00:00:00.000Z`) : Number.NaN;
  if (!Number.isFinite(ms) || new Date(ms).toISOString().slice(0, 10) !== date) {
    throw new RailError(400, 'invalid_request', 'the statement date must be a calendar date, YYYY-MM-DD');
  }
  return ms;
}

const dateOf = (ms: number) => new Date(ms).toISOString().slice(0, 10);

function valueDateOf(payment: SettledPayment): string {
  return dateOf(payment.settledAtMs + (payment.scenario === 'statement_late' ? STATEMENT_LATE_DAYS * DAY_MS : 0));
}

function paymentLine(profile: PartnerProfile, payment: SettledPayment, id: string): StatementLine {
  const { view } = payment;
  const scale = currencyScale(view.currency);
  const payIn = PAY_IN_CURRENCIES[profile.slug] !== undefined;
  const amount = new BigNumber(view.amount).times(payIn ? 1 : -1);
  const fee = new BigNumber(payment.scenario === 'statement_fee' ? STATEMENT_FEE : 0);
  return {
    id, type: payIn ? 'pay_in' : 'payout', reference: view.id, client_reference: view.reference,
    amount: amount.toFixed(scale), fee: fee.toFixed(scale), net: amount.minus(fee).toFixed(scale), currency: view.currency, value_date: valueDateOf(payment),
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

/** The statement of value date `date`. */
export async function dailyStatement(profile: PartnerProfile, book: PaymentBook, date: string, nowMs: number): Promise<Statement> {
  const startMs = dayStartMs(date);
  // Settled that day, and the late lines of the payments settled STATEMENT_LATE_DAYS before it.
  const lateFromMs = startMs - STATEMENT_LATE_DAYS * DAY_MS;
  const settled = (await book.settledBetween(startMs, startMs + DAY_MS, { scenario: 'statement_late', fromMs: lateFromMs, toMs: lateFromMs + DAY_MS })
    ).filter((p) => p.ownerUserId !== CLIENT_USER_ID && valueDateOf(p) === date);
  const lines: StatementLine[] = [];
  const batched: StatementLine[] = [];
  for (const payment of settled) {
    const line = paymentLine(profile, payment, `stl_${payment.view.id}`);
    switch (payment.scenario) {
      case 'statement_missing': break;
      case 'statement_duplicate': lines.push(line, { ...line, id: `${line.id}_2` }); break;
      case 'statement_batched': batched.push(line); break;
      default: lines.push(line);
    }
  }
  return { partner: profile.slug, date, final: nowMs >= startMs + DAY_MS, lines: [...lines, ...batchLines(profile, date, batched)] };
}
