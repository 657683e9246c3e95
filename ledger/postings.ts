// Posting rules: pure functions from a business event to a balanced journal entry. Amounts are
// signed: a positive amount raises the holder's balance, and every entry sums to zero per
// currency (checked here and again by Postgres).
import assert from 'node:assert/strict';
import { available, faucetEquity, fxPosition, fxSpread, lateCompletionReceivable, partnerSettlement, pending, reconciliationSuspense, spendable } from './chart';
import type { EntryDraft, EntryKind, PostingDraft } from './entry';
import { assertEntryBalances } from './invariants';
import { CURRENCY_SCALE, Money, type Amount, type Currency } from './money';
import type { TransferRecord } from './transfers';

/** A conversion at a fixed price: `fromAmount` of `from` buys `toAmount` of `to`; `midRate` is the market rate it was priced from. */
export interface Conversion {
  from: Currency;
  to: Currency;
  fromAmount: Amount;
  toAmount: Amount;
  midRate: Amount;
}

/**
 * The FX desk's side of a conversion, between the customer's debit in `from` and credit in
 * `to`: its position takes `fromAmount`, pays out what that is worth at the mid-rate (at the
 * `to` scale), and the difference from what the customer receives is the spread it earned.
 */
function conversionLegs(conversion: Conversion): PostingDraft[] {
  const { from, to, fromAmount, toAmount } = conversion;
  const spread = conversionSpread(conversion);
  const atMid = toAmount.plus(spread);
  assert.ok(!spread.isNegative(), `a conversion pays out ${toAmount.toFixed()} ${to}, more than ${atMid.toFixed()} at the mid-rate`);
  const legs = [{ account: fxPosition(from), amount: fromAmount }, { account: fxPosition(to), amount: atMid.negated() }];
  return spread.isZero() ? legs : [...legs, { account: fxSpread(to), amount: spread }];
}

/** What the FX desk keeps of a conversion: `fromAmount` at the mid-rate (at the `to` scale, half-even) less what the customer receives. */
export function conversionSpread({ to, fromAmount, toAmount, midRate }: Conversion): Amount {
  return fromAmount.times(midRate).decimalPlaces(CURRENCY_SCALE[to], Money.ROUND_HALF_EVEN).minus(toAmount);
}

/** The conversion a cross-currency transfer settles through, at the price it was quoted; null in one currency. */
export function conversionOf(record: TransferRecord): Conversion | null {
  if (record.payout_currency === record.currency) return null;
  return {
    from: record.currency, to: record.payout_currency, fromAmount: new Money(record.amount),
    toAmount: new Money(record.payout_amount), midRate: new Money(record.fx_mid_rate!),
  };
}

/** What an entry moves money for: a transfer, an executed quote, a partner payment, or none of them. */
interface EntryAbout { transferId?: string; quoteId?: string; paymentId?: string }

export function entry(id: string, kind: EntryKind, about: EntryAbout, postings: PostingDraft[]): EntryDraft {
  const draft = { id, kind, transferId: about.transferId ?? null, quoteId: about.quoteId ?? null, paymentId: about.paymentId ?? null, postings };
  assertEntryBalances(draft);
  return draft;
}

/** Sandbox test funds: faucet equity → the account's available balance. */
export function faucetCredit(id: string, accountId: string, currency: Currency, amount: Amount): EntryDraft {
  return entry(id, 'faucet_credit', {}, [
    { account: faucetEquity(currency), amount: amount.negated() },
    { account: available(accountId, currency), amount },
  ]);
}

/** A book transfer between two accounts of this ledger, final at once, from the sender's `fromWalletId` (null: the main balance). */
export function internalTransfer(id: string, transferId: string, senderId: string, fromWalletId: string | null, recipientId: string, currency: Currency, amount: Amount): EntryDraft {
  return entry(id, 'internal_transfer', { transferId }, [
    { account: spendable(senderId, fromWalletId, currency), amount: amount.negated() },
    { account: available(recipientId, currency), amount },
  ]);
}

/** A reversal of a book transfer: the recipient's available back to the sender's (its main balance). */
export function transferReversal(id: string, transferId: string, senderId: string, recipientId: string, currency: Currency, amount: Amount): EntryDraft {
  return entry(id, 'transfer_reversal', { transferId }, [
    { account: available(recipientId, currency), amount: amount.negated() },
    { account: available(senderId, currency), amount },
  ]);
}

/**
 * A return of a transfer paid through a partner (DESIGN.md section 5h): while the partner makes it,
 * the recipient's part, in the payout currency, is held from its available.
 */
export function holdReturn(id: string, transferId: string, recipientId: string, payoutCurrency: Currency, payout: Amount): EntryDraft {
  return entry(id, 'return_hold', { transferId }, [
    { account: available(recipientId, payoutCurrency), amount: payout.negated() },
    { account: pending(recipientId, payoutCurrency), amount: payout },
  ]);
}

/**
 * The partner made the return: the recipient's held `payout` leaves, and the sender is credited
 * `amount` in the currency it sent. Across currencies the legs of the transfer's settlement are
 * reversed in their parts (ledger/reversal-parts.ts), at the transfer's own rate: the FX desk's
 * position gives back `amount` in the sent currency and takes `payout` + `spread` in the payout
 * currency, and its spread gives back `spread`. A part of zero has no posting.
 */
export function settleReturn(id: string, transferId: string, senderId: string, recipientId: string, currency: Currency, amount: Amount,
  payoutCurrency: Currency, payout: Amount, spread: Amount): EntryDraft {
  const legs: PostingDraft[] = [
    { account: pending(recipientId, payoutCurrency), amount: payout.negated() },
    { account: available(senderId, currency), amount },
  ];
  if (payoutCurrency !== currency) {
    legs.push({ account: fxPosition(currency), amount: amount.negated() }, { account: fxPosition(payoutCurrency), amount: payout.plus(spread) });
    legs.push({ account: fxSpread(payoutCurrency), amount: spread.negated() });
  }
  return entry(id, 'return_settle', { transferId }, legs.filter((leg) => !leg.amount.isZero()));
}

/** The partner did not make the return: the recipient's held part goes back to its available. */
export function releaseReturn(id: string, transferId: string, recipientId: string, payoutCurrency: Currency, payout: Amount): EntryDraft {
  return entry(id, 'return_release', { transferId }, [
    { account: pending(recipientId, payoutCurrency), amount: payout.negated() },
    { account: available(recipientId, payoutCurrency), amount: payout },
  ]);
}

/**
 * Holds the amount of a transfer that a partner rail is executing, taken from the sender's
 * `fromWalletId` (null: the main balance); it waits in the main balance's pending either way.
 */
export function holdForTransfer(id: string, transferId: string, senderId: string, fromWalletId: string | null, currency: Currency, amount: Amount): EntryDraft {
  return entry(id, 'transfer_hold', { transferId }, [
    { account: spendable(senderId, fromWalletId, currency), amount: amount.negated() },
    { account: pending(senderId, currency), amount },
  ]);
}

/**
 * The rail settled: the held amount reaches the recipient's account; across currencies, through
 * the FX desk at the price fixed when the transfer was quoted.
 */
export function settleTransfer(id: string, transferId: string, senderId: string, recipientId: string, currency: Currency, amount: Amount, conversion: Conversion | null): EntryDraft {
  if (!conversion) {
    return entry(id, 'transfer_settle', { transferId }, [
      { account: pending(senderId, currency), amount: amount.negated() },
      { account: available(recipientId, currency), amount },
    ]);
  }
  return entry(id, 'transfer_settle', { transferId }, [
    { account: pending(senderId, currency), amount: amount.negated() },
    ...conversionLegs(conversion),
    { account: available(recipientId, conversion.to), amount: conversion.toAmount },
  ]);
}

/** A conversion inside one account (POST /v1/fx/execute): one entry, each currency balancing on its own. */
export function fxConversion(id: string, quoteId: string, accountId: string, conversion: Conversion): EntryDraft {
  return entry(id, 'fx_conversion', { quoteId }, [
    { account: available(accountId, conversion.from), amount: conversion.fromAmount.negated() },
    ...conversionLegs(conversion),
    { account: available(accountId, conversion.to), amount: conversion.toAmount },
  ]);
}

/**
 * The rail failed or reversed the payment: the hold goes back to the sender's `walletId`, where
 * the money came from ("main": the main balance).
 */
export function releaseTransfer(id: string, transferId: string, senderId: string, walletId: string, currency: Currency, amount: Amount): EntryDraft {
  return entry(id, 'transfer_release', { transferId }, [
    { account: pending(senderId, currency), amount: amount.negated() },
    { account: spendable(senderId, walletId, currency), amount },
  ]);
}

/**
 * A partner paid a transfer after the ledger had failed it and released its hold: the amount is
 * held again, from the available balance of the sender's `walletId` it was released to as far as
 * that covers it (`covered`) and for the rest from the late-completion receivable, so the
 * settlement that follows is the ordinary one.
 */
export function reholdLateTransfer(id: string, transferId: string, senderId: string, walletId: string, currency: Currency, amount: Amount, covered: Amount): EntryDraft {
  assert.ok(!covered.isNegative() && covered.isLessThanOrEqualTo(amount), 'the covered part of a late transfer lies between zero and its amount');
  const shortfall = amount.minus(covered);
  const postings: PostingDraft[] = [];
  if (!covered.isZero()) postings.push({ account: spendable(senderId, walletId, currency), amount: covered.negated() });
  if (!shortfall.isZero()) postings.push({ account: lateCompletionReceivable(currency), amount: shortfall.negated() });
  postings.push({ account: pending(senderId, currency), amount });
  return entry(id, 'transfer_rehold', { transferId }, postings);
}

/** A pay-in the partner settled: its settlement account → the account's available balance. */
export function payInSettled(id: string, paymentId: string, partner: string, accountId: string, currency: Currency, amount: Amount): EntryDraft {
  return entry(id, 'payment_settle', { paymentId }, [
    { account: partnerSettlement(partner, currency), amount: amount.negated() },
    { account: available(accountId, currency), amount },
  ]);
}

/** An outbound payment is held while the partner executes it. */
export function paymentHold(id: string, paymentId: string, accountId: string, currency: Currency, amount: Amount): EntryDraft {
  return entry(id, 'payment_hold', { paymentId }, [
    { account: available(accountId, currency), amount: amount.negated() },
    { account: pending(accountId, currency), amount },
  ]);
}

/** The partner paid it out: the hold leaves for the partner's settlement account. */
export function payOutSettled(id: string, paymentId: string, partner: string, accountId: string, currency: Currency, amount: Amount): EntryDraft {
  return entry(id, 'payment_settle', { paymentId }, [
    { account: pending(accountId, currency), amount: amount.negated() },
    { account: partnerSettlement(partner, currency), amount },
  ]);
}

/** The payment failed or was cancelled: the hold goes back to the account. */
export function paymentRelease(id: string, paymentId: string, accountId: string, currency: Currency, amount: Amount): EntryDraft {
  return entry(id, 'payment_release', { paymentId }, [
    { account: pending(accountId, currency), amount: amount.negated() },
    { account: available(accountId, currency), amount },
  ]);
}

/**
 * A reconciliation adjustment: `difference` (statement − ledger, as the partner sees it) moves
 * between the partner's settlement account and suspense. A pay-in the partner settled lowers its
 * settlement account, so the partner crediting more than the ledger has lowers it further.
 */
export function reconciliationAdjustment(id: string, partner: string, currency: Currency, difference: Amount): EntryDraft {
  return entry(id, 'reconciliation_adjustment', {}, [
    { account: partnerSettlement(partner, currency), amount: difference.negated() },
    { account: reconciliationSuspense(currency), amount: difference },
  ]);
}
