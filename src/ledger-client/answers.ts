// The ledger's outcomes (ledger/outcome.ts) as HTTP answers, from the views of its records the
// outcome carries (never a table's row): a refusal is the error body of
// SPEC.md section 2 with its code's status; an accepted transfer is its API view, 201 when the
// command created it. Returned, not thrown, so the idempotency guard keeps them as final answers.
import { quoteStatus } from '../../ledger/fx-quotes';
import { RATE_DECIMALS } from '../../ledger/fx-rates';
import { metadataOf } from '../../ledger/metadata';
import { formatAmount, Money } from '../../ledger/money';
import type { FaucetCredited, FxExecuted, Outcome, PaymentShown, QuoteShown, Refused, TransferOutcome, TransferShown } from '../../ledger/outcome';
import { DomainError, errorBody } from '../domain-error';
import type { LedgerDecision } from './client';
import { asReplay } from '../idempotency/guard';
import type { RouteResult } from '../http/route';

/**
 * The API representation of a transfer (create response, GET, list): of the ledger's outcome, or of
 * a row of the read model (a row holds every field the ledger's view of it does).
 */
export function transferView(record: TransferShown) {
  return {
    transfer_id: record.id,
    type: record.type,
    status: record.status,
    amount: formatAmount(record.amount, record.currency),
    currency: record.currency,
    payout: { amount: formatAmount(record.payout_amount, record.payout_currency), currency: record.payout_currency },
    fx: record.fx_rate === null ? null : {
      rate: new Money(record.fx_rate).toFixed(RATE_DECIMALS), mid_rate: new Money(record.fx_mid_rate!).toFixed(RATE_DECIMALS), spread: new Money(record.fx_spread!).toFixed(),
    },
    recipient: record.recipient,
    note: record.note,
    metadata: metadataOf(record),
    estimated_arrival: record.estimated_arrival,
    partner_payment_id: record.partner_payment_id,
    failure: record.failure_code ? { code: record.failure_code, message: record.failure_message } : null,
    late_completion: record.late_completion ?? null,
    reversed_amount: formatAmount(record.reversed_amount ?? '0', record.currency),
    created_at: record.created_at.toISOString(),
    updated_at: record.updated_at.toISOString(),
    completed_at: record.completed_at ? record.completed_at.toISOString() : null,
  };
}

/** A persisted FX quote as the API shows it, its status at `now` (its account's: the wall's, or its test clock's). */
export function quoteView(quote: QuoteShown, now: Date) {
  return {
    id: quote.id, status: quoteStatus(quote, now),
    from_currency: quote.from_currency, to_currency: quote.to_currency,
    from_amount: formatAmount(quote.from_amount, quote.from_currency), to_amount: formatAmount(quote.to_amount, quote.to_currency),
    rate: new Money(quote.rate).toFixed(RATE_DECIMALS), mid_rate: new Money(quote.mid_rate).toFixed(RATE_DECIMALS), spread: new Money(quote.spread).toFixed(),
    created_at: quote.created_at.toISOString(), expires_at: quote.expires_at.toISOString(),
    consumed_at: quote.consumed_at ? quote.consumed_at.toISOString() : null,
  };
}

export function fxExecutionAnswer(outcome: FxExecuted): RouteResult {
  return {
    status: 201,
    body: {
      quote: quoteView(outcome.quote, outcome.quote.consumed_at!), entry_id: outcome.entry_id,
      debit_transaction_id: outcome.debit_transaction_id, credit_transaction_id: outcome.credit_transaction_id,
    },
  };
}

/** The Payment of SPEC.md section 2, every field present. */
export function paymentView(payment: PaymentShown) {
  return {
    id: payment.id, partner: payment.partner, direction: payment.direction, kind: payment.kind,
    amount: formatAmount(payment.amount, payment.currency), currency: payment.currency, status: payment.status,
    external_id: payment.external_id, claim_link: payment.claim_link, idempotency_key: payment.idempotency_key, retry_count: payment.retry_count,
    customer_id: payment.customer_id, source_funding_method_external_id: payment.funding_method_external_id,
    purpose: payment.purpose, payee: payment.payee, metadata: metadataOf(payment),
    failure: payment.failure_code ? { code: payment.failure_code, message: payment.failure_message } : null,
    created_at: payment.created_at.toISOString(), completed_at: payment.completed_at ? payment.completed_at.toISOString() : null,
  };
}

export function refusalAnswer(outcome: Refused): RouteResult {
  const error = new DomainError(outcome.code, outcome.message, outcome.field);
  return { status: error.status, body: errorBody(error) };
}

export function transferAnswer(outcome: TransferOutcome): RouteResult {
  return { status: outcome.created ? 201 : 200, body: transferView(outcome.transfer) };
}

export function faucetAnswer(outcome: FaucetCredited): RouteResult {
  return {
    status: 201,
    body: {
      id: outcome.entry_id, account_id: outcome.account_id, currency: outcome.currency, amount: outcome.amount,
      balance: { currency: outcome.currency, available: outcome.available, pending: outcome.pending },
    },
  };
}

/** An outcome of a kind the route did not expect is a bug, not a client error. */
export function unexpectedOutcome(outcome: Outcome): never {
  throw new Error(`the ledger answered a ${outcome.kind} outcome where the route expects another`);
}

/**
 * The answer to the ledger's decision on a route whose Idempotency-Key the ledger keeps (DESIGN.md
 * section 5f): a refusal's error body (a conflict under the key among them), or what `accepted`
 * makes of an outcome of the expected kind; a decision made before this request, as a replay.
 */
export function decisionAnswer<K extends Exclude<Outcome['kind'], 'refused'>>(
  decision: LedgerDecision, kind: K, accepted: (outcome: Extract<Outcome, { kind: K }>) => RouteResult,
): RouteResult {
  const { outcome } = decision;
  let result: RouteResult;
  // A conflict answers this request, not the key: it is not the key's final answer.
  if (outcome.kind === 'refused' && outcome.code === 'idempotency_conflict') return { ...refusalAnswer(outcome), final: false };
  if (outcome.kind === 'refused') result = refusalAnswer(outcome);
  else if (outcome.kind === kind) result = accepted(outcome as Extract<Outcome, { kind: K }>);
  else unexpectedOutcome(outcome);
  return decision.replayed ? asReplay(result) : result;
}
