// The ledger's decisions, one command at a time, against the balances of the batch. Expected
// refusals (insufficient funds, unknown recipient...) are outcomes (outcome.ts); a broken
// invariant is an assertion failure.
import { transferOutcome } from './outcome';
import { randomUUID } from 'node:crypto';
import { available, heldBy, MAIN_WALLET, pending, spendable } from './chart';
import type { BalanceBook } from './balances';
import { emptyDecision, post, refusal, type Decision, type EventDraft } from './decision';
import type { FaucetCredit, FxExecute, TransferCreate } from './messages';
import { quoteStatus, type FxQuoteRecord } from './fx-quotes';
import { isSupportedPair, price } from './fx-rates';
import { formatAmount, Money, STABLECOINS, type Amount, type Currency } from './money';
import { faucetCredit, fxConversion, holdForTransfer, internalTransfer } from './postings';
import { ESTIMATED_ARRIVAL, railFor, type TransferRecord, type TransferStatus } from './transfers';
import type { WalletRecord } from './wallets';

/** What the ledger knows about an account when it decides. */
export interface AccountFacts {
  id: string;
  kybStatus: string;
  hasVibans: boolean;
  hasChainWallet: boolean;
}

export { emptyDecision, post, refusal, type Decision, type EventDraft, type PostedEntry, type RecordChange } from './decision';

/**
 * The main balance's balance.updated event: `amount` is the money the account owns, available +
 * held + pending, as on a wallet and in the routes (DESIGN.md section 3). Every round loads the
 * held account beside each available one it names (consumers/ledger/handler.ts), so the figure
 * is there whichever command moved the balance.
 */
export function balanceEvent(book: BalanceBook, accountId: string, currency: Currency): EventDraft {
  const availableBalance = book.balance(available(accountId, currency));
  const pendingBalance = book.balance(pending(accountId, currency));
  const heldBalance = book.balance(heldBy(accountId, MAIN_WALLET, currency));
  return {
    type: 'balance.updated', resourceType: 'balance', resourceId: accountId, accountId, status: 'updated',
    amount: formatAmount(availableBalance.plus(heldBalance).plus(pendingBalance), currency), currency,
    attributes: { available: formatAmount(availableBalance, currency), held: formatAmount(heldBalance, currency), pending: formatAmount(pendingBalance, currency) },
  };
}

/**
 * A wallet's balance.updated event: the account's event, naming the wallet, with its available
 * and held figures (pending is the main balance's alone: a rail's payout waits there).
 */
export function walletBalanceEvent(book: BalanceBook, accountId: string, walletId: string, currency: Currency): EventDraft {
  const availableBalance = book.balance(spendable(accountId, walletId, currency));
  const heldBalance = book.balance(heldBy(accountId, walletId, currency));
  return {
    type: 'balance.updated', resourceType: 'balance', resourceId: accountId, accountId, status: 'updated',
    amount: formatAmount(availableBalance.plus(heldBalance), currency), currency,
    attributes: { wallet_id: walletId, available: formatAmount(availableBalance, currency), held: formatAmount(heldBalance, currency), pending: formatAmount('0', currency) },
  };
}

/**
 * The sender's balance events after a transfer's money left `walletId` (or came back to it): the
 * wallet's, and the main balance's whenever its pending moved (`pendingMoved`) or it is the wallet.
 */
export function senderBalanceEvents(book: BalanceBook, accountId: string, walletId: string, currency: Currency, pendingMoved: boolean): EventDraft[] {
  if (walletId === MAIN_WALLET) return [balanceEvent(book, accountId, currency)];
  const wallet = walletBalanceEvent(book, accountId, walletId, currency);
  return pendingMoved ? [balanceEvent(book, accountId, currency), wallet] : [wallet];
}

function transferEvent(record: TransferRecord, status: TransferStatus): EventDraft {
  return {
    type: `transfer.${status}`, resourceType: 'transfer', resourceId: record.id, accountId: record.account_id, status,
    amount: formatAmount(record.amount, record.currency), currency: record.currency,
    attributes: { partner_payment_id: record.partner_payment_id, failure_code: record.failure_code }, metadata: record.metadata,
  };
}

/** Events name the lifecycle states of SPEC.md section 6; `quoting` has no event type. */
const EMITTED_STATUSES: readonly TransferStatus[] = ['pending', 'executing', 'completed', 'failed', 'rolled_back'];

export function walk(record: TransferRecord, path: TransferStatus[], at: Date, decision: Decision): void {
  const isNew = decision.changes.some((c) => c.kind === 'transfer' && c.isNew && c.transfer.id === record.id);
  let from: TransferStatus | null = isNew ? null : record.status;
  for (const to of path) {
    decision.changes.push({ kind: 'transfer_transition', transferId: record.id, from, to, at });
    if (EMITTED_STATUSES.includes(to)) decision.events.push(transferEvent({ ...record, status: to }, to));
    from = to;
  }
  record.status = path[path.length - 1];
}

/**
 * The sandbox faucet's bounds, in whole units of the credited currency: per credit, and per
 * account, currency and UTC day of the ledger's clock (every credit decided that day counts).
 * Large enough for a load test's funding, small enough that no account holds unbounded money.
 */
export const FAUCET_CREDIT_MAX = '1000000';
export const FAUCET_DAILY_MAX = '10000000';

/**
 * A faucet credit. `account`: the credited account's facts (null: not read, as for a caller that
 * checked them itself); `creditedToday`: what the faucet credited the account in the currency
 * this UTC day before this command.
 */
export function decideFaucetCredit(accountId: string, command: FaucetCredit, book: BalanceBook,
  account: AccountFacts | null = null, creditedToday: Amount = new Money(0)): Decision {
  const amount = new Money(command.amount);
  if (account && STABLECOINS.includes(command.currency) && !account.hasChainWallet) {
    return refusal('account_no_chain_wallet', `${command.currency} test funds need a chain wallet on the account (sign up with "chain_wallet": true)`, 'currency');
  }
  if (amount.isGreaterThan(FAUCET_CREDIT_MAX)) {
    return refusal('faucet_limit_exceeded', `the faucet credits at most ${FAUCET_CREDIT_MAX} ${command.currency} at a time`, 'amount');
  }
  if (amount.plus(creditedToday).isGreaterThan(FAUCET_DAILY_MAX)) {
    return refusal('faucet_limit_exceeded',
      `the faucet credits at most ${FAUCET_DAILY_MAX} ${command.currency} per account and UTC day; ${formatAmount(new Money(creditedToday), command.currency)} were credited today`, 'amount');
  }
  const entry = faucetCredit(command.entry_id, accountId, command.currency, amount);
  const postings = book.apply(entry);
  const event = balanceEvent(book, accountId, command.currency);
  const decision = emptyDecision({
    kind: 'faucet_credit', entry_id: command.entry_id, account_id: accountId, currency: command.currency,
    amount: formatAmount(amount, command.currency), available: event.attributes!.available as string, pending: event.attributes!.pending as string,
  });
  decision.entries.push({ entry, postings });
  decision.events.push(event);
  return decision;
}

export interface TransferFacts {
  sender: AccountFacts | null;
  /** Internal: the account registered under recipient_email. External: the account whose vIBAN matches the bank details. */
  recipient: AccountFacts | null;
  /** The wallet the command spends from, as locked for the round; absent: no wallet was read (a transfer from the main balance). */
  wallets?: Map<string, WalletRecord>;
}

/** Whether `walletId` is an open wallet of the sender: another account's is as unknown as a missing one (as for wallet transfers). */
function isOpenWalletOf(senderId: string, walletId: string, wallets: Map<string, WalletRecord> | undefined): boolean {
  const wallet = wallets?.get(walletId);
  return wallet !== undefined && wallet.account_id === senderId && wallet.closed_at === null;
}

/** Checks in order of precedence; the first that fails is the answer. */
function refuseTransfer(command: TransferCreate, facts: TransferFacts, book: BalanceBook): Decision | null {
  const { sender, recipient } = facts;
  if (!sender) return refusal('resource_not_found', 'the sending account does not exist');
  if (sender.kybStatus !== 'active') return refusal('account_not_active', `the account's KYB status is ${sender.kybStatus}; it must be active to move money`);
  const fromWalletId = command.from_wallet_id ?? null;
  if (fromWalletId !== null && !isOpenWalletOf(sender.id, fromWalletId, facts.wallets)) {
    return refusal('wallet_not_found', 'from_wallet_id names no open wallet of the account', 'from_wallet_id');
  }
  const stablecoin = STABLECOINS.includes(command.currency);
  if (stablecoin && !sender.hasChainWallet) {
    return refusal('sender_no_chain_wallet', `${command.currency} transfers need a chain wallet on the sending account`, 'currency');
  }
  if (command.type === 'internal') {
    if (!recipient) return refusal('recipient_not_found', 'no account is registered under recipient_email', 'recipient_email');
    if (recipient.id === sender.id) return refusal('invalid_request', 'the recipient is the sending account itself', 'recipient_email');
    if (!recipient.hasVibans && !recipient.hasChainWallet) {
      return refusal('phantom_recipient', 'the recipient has no wallet or bank account to receive funds', 'recipient_email');
    }
    if (stablecoin && !recipient.hasChainWallet) {
      return refusal('phantom_recipient', `the recipient has no chain wallet to receive ${command.currency}`, 'recipient_email');
    }
  } else {
    if (!recipient) {
      return refusal('external_send_blocked', 'sandbox: the bank details match no registered sandbox account', 'recipient.bank.account_number');
    }
    if (recipient.id === sender.id) return refusal('invalid_request', 'the bank details are the sending account\'s own', 'recipient.bank.account_number');
  }
  if (book.balance(spendable(sender.id, fromWalletId, command.currency)).isLessThan(command.amount)) {
    return refusal('insufficient_funds', `the available ${command.currency} balance${fromWalletId === null ? '' : ' of the wallet'} is below the amount`, 'amount');
  }
  return null;
}

/** The currency the recipient is paid in: the bank account's, for an external transfer. */
export function payoutCurrencyOf(command: TransferCreate): Currency {
  return command.type === 'external' ? command.recipient!.bank.currency as Currency : command.currency;
}

type Payout = Pick<TransferRecord, 'payout_amount' | 'payout_currency' | 'fx_rate' | 'fx_mid_rate' | 'fx_spread'>;

/** What the recipient is paid; across currencies, at the live price fixed now (the transfer's `quoting` step). */
function quotePayout(command: TransferCreate, now: Date): Payout | Decision {
  const payoutCurrency = payoutCurrencyOf(command);
  if (payoutCurrency === command.currency) {
    return { payout_amount: command.amount, payout_currency: payoutCurrency, fx_rate: null, fx_mid_rate: null, fx_spread: null };
  }
  if (!isSupportedPair(command.currency, payoutCurrency)) {
    return refusal('unsupported_pair', `${command.currency} to ${payoutCurrency} is not a supported pair`, 'recipient.bank.currency');
  }
  const quoted = price(command.currency, payoutCurrency, new Money(command.amount), now);
  if (new Money(quoted.toAmount).isZero()) return refusal('invalid_request', `amount is too small to buy any ${payoutCurrency}`, 'amount');
  return { payout_amount: quoted.toAmount, payout_currency: payoutCurrency, fx_rate: quoted.rate, fx_mid_rate: quoted.midRate, fx_spread: quoted.spread };
}

export function decideTransferCreate(commandId: string, command: TransferCreate, facts: TransferFacts, book: BalanceBook, now: Date): Decision {
  const refused = refuseTransfer(command, facts, book);
  if (refused) return refused;
  const payout = quotePayout(command, now);
  if ('outcome' in payout) return payout;
  const sender = facts.sender!;
  const recipient = facts.recipient!;
  const rail = railFor(command.type, command.currency);
  const amount = new Money(command.amount);
  const record: TransferRecord = {
    id: command.transfer_id, account_id: sender.id, from_wallet_id: command.from_wallet_id ?? null, command_id: commandId, type: command.type, status: 'pending',
    amount: command.amount, currency: command.currency, ...payout, recipient_account_id: recipient.id,
    recipient: command.type === 'internal' ? { email: command.recipient_email } : (command.recipient as unknown as Record<string, unknown>),
    note: command.note, metadata: command.metadata ?? {}, partner: rail, partner_payment_id: null, failure_code: null, failure_message: null,
    estimated_arrival: ESTIMATED_ARRIVAL[rail], created_at: now, updated_at: now, completed_at: null,
  };
  const decision = emptyDecision(transferOutcome(record, true));
  decision.changes.push({ kind: 'transfer', transfer: record, isNew: true });
  const entryId = randomUUID();
  const senderSide = record.from_wallet_id ?? MAIN_WALLET;
  if (rail === 'book') {
    post(decision, book, internalTransfer(entryId, record.id, sender.id, record.from_wallet_id, recipient.id, command.currency, amount));
    record.partner_payment_id = `book_${entryId.replace(/-/g, '')}`;
    record.completed_at = now;
    walk(record, ['pending', 'quoting', 'executing', 'completed'], now, decision);
    decision.events.push(...senderBalanceEvents(book, sender.id, senderSide, command.currency, false), balanceEvent(book, recipient.id, command.currency));
  } else {
    post(decision, book, holdForTransfer(entryId, record.id, sender.id, record.from_wallet_id, command.currency, amount));
    walk(record, ['pending', 'quoting', 'executing'], now, decision);
    decision.events.push(...senderBalanceEvents(book, sender.id, senderSide, command.currency, true));
    decision.changes.push({
      kind: 'partner_instruction',
      partner: rail, accountId: sender.id, type: 'transfer.execute',
      payload: {
        transfer_id: record.id, amount: formatAmount(record.payout_amount, record.payout_currency), currency: record.payout_currency, attempt: 0,
        beneficiary: { ...record.recipient, account_id: recipient.id }, scenario: command.scenario ?? null,
      },
    });
  }
  return decision;
}

export interface FxExecuteFacts {
  account: AccountFacts | null;
  /** The quote as the ledger holds it now (locked for the batch); null when unknown. */
  quote: FxQuoteRecord | null;
}

/** Checks in order of precedence; another account's quote is as unknown as a missing one. */
function refuseFxExecute(accountId: string, command: FxExecute, { account, quote }: FxExecuteFacts, book: BalanceBook, now: Date): Decision | null {
  if (!account) return refusal('resource_not_found', 'the account does not exist');
  if (!quote || quote.account_id !== accountId) return refusal('quote_not_found', 'no such FX quote', command.quote_id);
  const status = quoteStatus(quote, now);
  if (status === 'consumed') return refusal('quote_already_consumed', 'the quote was executed already', command.quote_id);
  if (status === 'expired') return refusal('quote_expired', `the quote expired at ${quote.expires_at.toISOString()}`, command.quote_id);
  if (account.kybStatus !== 'active') return refusal('account_not_active', `the account's KYB status is ${account.kybStatus}; it must be active to move money`);
  if (book.balance(available(accountId, quote.from_currency)).isLessThan(quote.from_amount)) {
    return refusal('insufficient_funds', `the available ${quote.from_currency} balance is below the quote's from_amount`, 'quote_id');
  }
  return null;
}

/** Executes a persisted quote: one conversion entry inside the account, the quote consumed with it. */
export function decideFxExecute(accountId: string, command: FxExecute, facts: FxExecuteFacts, book: BalanceBook, now: Date): Decision {
  const refused = refuseFxExecute(accountId, command, facts, book, now);
  if (refused) return refused;
  const quote: FxQuoteRecord = { ...facts.quote!, consumed_at: now };
  const entry = fxConversion(command.entry_id, quote.id, accountId, {
    from: quote.from_currency, to: quote.to_currency, fromAmount: new Money(quote.from_amount),
    toAmount: new Money(quote.to_amount), midRate: new Money(quote.mid_rate),
  });
  const postings = book.apply(entry);
  const onAvailable = (currency: Currency) => postings.find((p) => p.ref.kind === 'available' && p.ref.currency === currency)!.id;
  const decision = emptyDecision({
    kind: 'fx_execution', quote, entry_id: entry.id,
    debit_transaction_id: onAvailable(quote.from_currency), credit_transaction_id: onAvailable(quote.to_currency),
  });
  decision.entries.push({ entry, postings });
  decision.changes.push({ kind: 'quote_consumed', quote });
  decision.events.push(balanceEvent(book, accountId, quote.from_currency), balanceEvent(book, accountId, quote.to_currency));
  return decision;
}
