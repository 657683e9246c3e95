// transfer.create: one transfer, internal (settled in its entry) or to bank details (held, then
// paid by a partner: transfer.partner_result); from the main balance or a wallet. A batch's items
// (transfer-batch.ts) are each decided here too. Expected refusals (insufficient funds, unknown
// recipient...) are outcomes (outcome.ts); a broken invariant is an assertion failure.
import { randomUUID } from 'node:crypto';
import type { BalanceBook } from '../balances';
import { balanceEvent, senderBalanceEvents, sideAccounts } from '../balance-events';
import { available, MAIN_WALLET, pending, spendable, type LedgerAccountRef } from '../chart';
import { emptyDecision, post, refusal, type Decision } from '../decision';
import { canonicalEmail } from '../emails';
import { isSupportedPair, price } from '../fx-rates';
import type { Metadata } from '../metadata';
import { formatAmount, Money, STABLECOINS, type Currency } from '../money';
import { transferOutcome } from '../outcome';
import { holdForTransfer, internalTransfer } from '../postings';
import { isCanonicalUuid, invalid } from '../screen';
import { walk } from '../transfer-lifecycle';
import { ESTIMATED_ARRIVAL, railFor, type TransferRecord } from '../transfers';
import type { WalletRecord } from '../wallets';
import type { LedgerCommand, Needs } from './command';
import { bankKey, type AccountFacts, type BatchFacts } from './facts';

export interface InternalRecipient {
  email: string;
}

export interface BankRecipient {
  email: string;
  name: string;
  bank: { country: string; bank_name: string; account_number: string; routing_number?: string; currency: string };
}

export interface TransferCreate {
  transfer_id: string;
  type: 'internal' | 'external';
  amount: string;
  currency: Currency;
  recipient_email?: string;
  recipient?: BankRecipient;
  note: string | null;
  /** The client's own values (DESIGN.md section 5h); absent in a command sent before transfers had them: none. */
  metadata?: Metadata;
  /** The sender's wallet the money comes out of (DESIGN.md section 5g); absent or null: the main balance. */
  from_wallet_id?: string | null;
  /** A sandbox failure the client asked the rail to act out (Sandbox-Scenario header); absent: none. */
  scenario?: string | null;
}

export const transferCreate: LedgerCommand<TransferCreate> = {
  shape: { ids: ['transfer_id'], amounts: ['amount'], currencies: ['currency'], accountIsUuid: true, metadata: 'create' },
  parse(payload) {
    const walletId = (payload as TransferCreate).from_wallet_id;
    if (walletId !== undefined && walletId !== null && !isCanonicalUuid(walletId)) return { refusal: invalid('from_wallet_id', 'from_wallet_id must be null (the main balance) or a wallet id') };
    return { payload: payload as TransferCreate };
  },
  needs: transferNeeds,
  accounts: (payload, accountId, facts) => transferAccounts(accountId, payload, facts),
  decide: ({ commandId, accountId, payload, facts, locked, book, now }) => decideTransferCreate(commandId, payload, {
    sender: facts.accountsById.get(accountId) ?? null, recipient: recipientOf(payload, facts), wallets: locked.wallets,
  }, book, now),
};

/** What a transfer (alone or a batch's item) names: its recipient, and the wallet it is sent from. */
export function transferNeeds(transfer: TransferCreate): Needs {
  return {
    sender: true,
    emails: transfer.type === 'internal' && transfer.recipient_email ? [transfer.recipient_email] : [],
    banks: transfer.type === 'external' && transfer.recipient ? [{ accountNumber: transfer.recipient.bank.account_number, currency: transfer.recipient.bank.currency }] : [],
    wallets: transfer.from_wallet_id ? [transfer.from_wallet_id] : [],
  };
}

/** The recipient a transfer command names, if the ledger knows the account. */
export function recipientOf(command: TransferCreate, facts: BatchFacts): AccountFacts | null {
  if (command.type === 'internal') return facts.accountsByEmail.get(canonicalEmail(command.recipient_email!)) ?? null;
  const bank = command.recipient!.bank;
  return facts.accountsByBank.get(bankKey(bank.account_number, bank.currency)) ?? null;
}

/** The ledger accounts a transfer (alone or a batch's item) may post to. */
export function transferAccounts(accountId: string, transfer: TransferCreate, facts: BatchFacts): LedgerAccountRef[] {
  if (!facts.accountsById.has(accountId)) return []; // refused: no such sender
  const refs = [available(accountId, transfer.currency), pending(accountId, transfer.currency)];
  const fromWalletId = transfer.from_wallet_id ?? null;
  // Sent from a wallet of the sender: its accounts too (its balance event reads the held one).
  // Another account's wallet, or none: refused, and no ledger account is made for it.
  if (fromWalletId !== null && facts.wallets.get(fromWalletId)?.account_id === accountId) refs.push(...sideAccounts(accountId, fromWalletId, transfer.currency));
  const recipient = recipientOf(transfer, facts);
  if (recipient) refs.push(available(recipient.id, payoutCurrencyOf(transfer)));
  return refs;
}

/** The currency the recipient is paid in: the bank account's, for an external transfer. */
export function payoutCurrencyOf(command: TransferCreate): Currency {
  return command.type === 'external' ? command.recipient!.bank.currency as Currency : command.currency;
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
