// Reads the commands of a batch and works out what the ledger needs to know before it locks
// anything: account facts, transfers, and the ledger accounts each command will touch.
import { available, faucetEquity, fxPosition, fxSpread, lateCompletionReceivable, partnerSettlement, pending, reconciliationSuspense, type LedgerAccountRef } from '../../ledger/chart';
import { payoutCurrencyOf, type AccountFacts } from '../../ledger/decide';
import { canonicalEmail } from '../../ledger/emails';
import type { FxQuoteRecord } from '../../ledger/fx-quotes';
import { COMMAND_TYPES, type FaucetCredit, type FxExecute, type LedgerCommandEnvelope, type PaymentCreate, type PaymentUpdate, type ReconciliationAdjust, type TransferCreate, type TransferPartnerResult, type WalletTransfer,
  type HoldCaptureCommand, type HoldCreate, type HoldRelease, type TransferBatch } from '../../ledger/messages';
import type { PaymentRecord } from '../../ledger/payments';
import { isCurrency, type Amount, type Currency } from '../../ledger/money';
import type { TransferRecord } from '../../ledger/transfers';
import { refused, type Refused } from '../../ledger/outcome';
import { firstUnstorable, screenPayload, unstorable } from '../../ledger/screen';
import { PoisonMessageError } from '../../src/kafka/consumer';
import { sideAccounts, walletTransferAccounts } from '../../ledger/decide-wallets';
import { holdAccounts } from '../../ledger/decide-holds';
import type { HoldRecord } from '../../ledger/holds';
import { MAIN_WALLET } from '../../ledger/chart';
import type { WalletRecord } from '../../ledger/wallets';

export type ParsedCommand =
  | { envelope: LedgerCommandEnvelope; type: 'faucet.credit'; payload: FaucetCredit }
  | { envelope: LedgerCommandEnvelope; type: 'transfer.create'; payload: TransferCreate }
  | { envelope: LedgerCommandEnvelope; type: 'transfer.partner_result'; payload: TransferPartnerResult }
  | { envelope: LedgerCommandEnvelope; type: 'fx.execute'; payload: FxExecute }
  | { envelope: LedgerCommandEnvelope; type: 'payment.create'; payload: PaymentCreate }
  | { envelope: LedgerCommandEnvelope; type: 'payment.update'; payload: PaymentUpdate }
  | { envelope: LedgerCommandEnvelope; type: 'reconciliation.adjust'; payload: ReconciliationAdjust }
  | { envelope: LedgerCommandEnvelope; type: 'wallet.transfer'; payload: WalletTransfer }
  | { envelope: LedgerCommandEnvelope; type: 'hold.create'; payload: HoldCreate }
  | { envelope: LedgerCommandEnvelope; type: 'hold.capture'; payload: HoldCaptureCommand }
  | { envelope: LedgerCommandEnvelope; type: 'hold.void' | 'hold.expire'; payload: HoldRelease }
  | { envelope: LedgerCommandEnvelope; type: 'transfer.batch'; payload: TransferBatch }
  // Refused as it is (screen.ts): decided alone, with a final answer, touching nothing.
  | { envelope: LedgerCommandEnvelope; type: 'refused'; refusal: Refused };

/**
 * A command as the round decides it: its payload parsed and screened, or refused as it is. Only a
 * message without an id the ledger can record its answer under is poison (the dead-letter topic).
 */
export function parseCommand(envelope: LedgerCommandEnvelope): ParsedCommand {
  if (typeof envelope.id !== 'string' || envelope.id === '' || unstorable(envelope.id)) {
    throw new PoisonMessageError('a command without an id the ledger can store');
  }
  const refuse = (refusal: Refused): ParsedCommand => ({ envelope, type: 'refused', refusal });
  const badText = firstUnstorable({ account_id: envelope.account_id, idempotency_key: envelope.idempotency_key, fingerprint: envelope.fingerprint }, 'command');
  if (badText) return refuse(refused('invalid_request', `${badText.path} ${badText.reason}`, badText.path));
  if (!(COMMAND_TYPES as readonly string[]).includes(envelope.type)) {
    return refuse(refused('invalid_request', `unknown command type "${String(envelope.type).slice(0, 100)}"`, 'type'));
  }
  let payload: unknown;
  try {
    payload = JSON.parse(envelope.payload);
  } catch {
    return refuse(refused('invalid_request', 'the command\'s payload is not JSON', 'payload'));
  }
  const refusal = screenPayload(envelope.type, envelope.account_id, payload);
  if (refusal) return refuse(refusal);
  switch (envelope.type) {
    case 'faucet.credit': return { envelope, type: envelope.type, payload: payload as FaucetCredit };
    case 'transfer.create': return { envelope, type: envelope.type, payload: payload as TransferCreate };
    case 'transfer.partner_result': return { envelope, type: envelope.type, payload: payload as TransferPartnerResult };
    case 'fx.execute': return { envelope, type: envelope.type, payload: payload as FxExecute };
    case 'payment.create': return { envelope, type: envelope.type, payload: payload as PaymentCreate };
    case 'payment.update': return { envelope, type: envelope.type, payload: payload as PaymentUpdate };
    case 'reconciliation.adjust': return { envelope, type: envelope.type, payload: payload as ReconciliationAdjust };
    case 'wallet.transfer': return { envelope, type: envelope.type, payload: payload as WalletTransfer };
    case 'hold.create': return { envelope, type: envelope.type, payload: payload as HoldCreate };
    case 'hold.capture': {
      // One recipient, of either form (the API checks the same): anything else names nobody to pay.
      const { recipient_email: email, recipient } = payload as HoldCaptureCommand;
      const internal = typeof email === 'string' && recipient === undefined;
      const external = email === undefined && typeof recipient?.bank?.account_number === 'string' && typeof recipient.bank.currency === 'string' && typeof recipient.email === 'string';
      if (!internal && !external) return refuse(refused('invalid_request', 'a capture names recipient_email or recipient with bank details, not both', 'recipient_email'));
      return { envelope, type: envelope.type, payload: payload as HoldCaptureCommand };
    }
    case 'hold.void': case 'hold.expire': return { envelope, type: envelope.type, payload: payload as HoldRelease };
    case 'transfer.batch': return { envelope, type: envelope.type, payload: payload as TransferBatch };
  }
}

export interface BatchFacts {
  accountsById: Map<string, AccountFacts>;
  accountsByEmail: Map<string, AccountFacts>;
  accountsByBank: Map<string, AccountFacts>;
  transfers: Map<string, TransferRecord>;
  /** The persisted quotes that fx.execute commands name, as read before the batch locks them. */
  quotes: Map<string, FxQuoteRecord>;
  /** The payments that payment.update commands name, as read before the batch locks them. */
  payments: Map<string, PaymentRecord>;
  /** What the faucet credited today to the accounts and currencies faucet.credit commands name (store.ts faucetKey). */
  faucetToday: Map<string, Amount>;
  /** The wallets wallet commands name, as read before the batch locks them. */
  wallets: Map<string, WalletRecord>;
  /** The holds hold commands name, as read before the batch locks them. */
  holds: Map<string, HoldRecord>;
}

/** The FX desk's accounts a conversion from `from` to `to` posts to. */
const fxDesk = (from: Currency, to: Currency): LedgerAccountRef[] => [fxPosition(from), fxPosition(to), fxSpread(to)];

/** The recipient a transfer command names, if the ledger knows the account. */
export function recipientOf(command: TransferCreate, facts: BatchFacts, bankKey: (n: string, c: string) => string): AccountFacts | null {
  if (command.type === 'internal') return facts.accountsByEmail.get(canonicalEmail(command.recipient_email!)) ?? null;
  const bank = command.recipient!.bank;
  return facts.accountsByBank.get(bankKey(bank.account_number, bank.currency)) ?? null;
}

/** The recipient a capture names, if the ledger knows the account: by email, or by the vIBAN of its bank details. */
export function captureRecipientOf(command: HoldCaptureCommand, facts: BatchFacts, bankKey: (n: string, c: string) => string): AccountFacts | null {
  if (command.recipient_email !== undefined) return facts.accountsByEmail.get(canonicalEmail(command.recipient_email)) ?? null;
  const bank = command.recipient!.bank;
  return facts.accountsByBank.get(bankKey(bank.account_number, bank.currency)) ?? null;
}

/** The ledger accounts a transfer.create (alone or in a batch) may post to. */
function transferAccounts(accountId: string, command: TransferCreate, facts: BatchFacts, bankKey: (n: string, c: string) => string): LedgerAccountRef[] {
  if (!facts.accountsById.has(accountId)) return []; // refused: no such sender
  const refs = [available(accountId, command.currency), pending(accountId, command.currency)];
  const fromWalletId = command.from_wallet_id ?? null;
  // Sent from a wallet of the sender: its accounts too (its balance event reads the held one).
  // Another account's wallet, or none: refused, and no ledger account is made for it.
  if (fromWalletId !== null && facts.wallets.get(fromWalletId)?.account_id === accountId) refs.push(...sideAccounts(accountId, fromWalletId, command.currency));
  const recipient = recipientOf(command, facts, bankKey);
  if (recipient) refs.push(available(recipient.id, payoutCurrencyOf(command)));
  return refs;
}

/** The transfers a command creates: transfer.create's one, a batch's items. */
export function transferCreatesOf(command: ParsedCommand): TransferCreate[] {
  if (command.type === 'transfer.create') return [command.payload];
  return command.type === 'transfer.batch' ? command.payload.items : [];
}

/** Every ledger account a command may post to, so the batch can lock them all up front. */
export function ledgerAccountsOf(command: ParsedCommand, facts: BatchFacts, bankKey: (n: string, c: string) => string): LedgerAccountRef[] {
  const accountId = command.envelope.account_id;
  switch (command.type) {
    case 'faucet.credit':
      return [faucetEquity(command.payload.currency), available(accountId, command.payload.currency)];
    case 'transfer.create':
      return transferAccounts(accountId, command.payload, facts, bankKey);
    case 'transfer.batch':
      return command.payload.items.flatMap((item) => transferAccounts(accountId, item, facts, bankKey));
    case 'transfer.partner_result': {
      const transfer = facts.transfers.get(command.payload.transfer_id);
      if (!transfer) return [];
      const refs = [available(transfer.account_id, transfer.currency), pending(transfer.account_id, transfer.currency)];
      // A failed payout from a wallet goes back to it (ledger/decide-partner-results.ts), and its balance event reads it.
      if (transfer.from_wallet_id !== null) refs.push(...sideAccounts(transfer.account_id, transfer.from_wallet_id, transfer.currency));
      if (transfer.recipient_account_id) refs.push(available(transfer.recipient_account_id, transfer.payout_currency));
      if (transfer.payout_currency !== transfer.currency) refs.push(...fxDesk(transfer.currency, transfer.payout_currency));
      // A late completion may owe what the sender's balance no longer covers (ledger/decide.ts).
      if (transfer.status === 'failed' && command.payload.outcome === 'completed') refs.push(lateCompletionReceivable(transfer.currency));
      return refs;
    }
    case 'fx.execute': {
      const quote = facts.quotes.get(command.payload.quote_id);
      if (!quote || quote.account_id !== accountId) return []; // refused: not the account's quote
      return [available(accountId, quote.from_currency), available(accountId, quote.to_currency), ...fxDesk(quote.from_currency, quote.to_currency)];
    }
    case 'payment.create':
      if (command.payload.kind === 'add_funds' || !facts.accountsById.has(accountId)) return [];
      return [available(accountId, command.payload.currency), pending(accountId, command.payload.currency)];
    case 'payment.update': {
      const payment = facts.payments.get(command.payload.payment_id);
      if (!payment) return [];
      return [partnerSettlement(payment.partner, payment.currency), available(payment.account_id, payment.currency), pending(payment.account_id, payment.currency)];
    }
    case 'reconciliation.adjust': {
      const { partner, currency } = command.payload;
      if (!isCurrency(currency)) return []; // refused: no such currency
      return [partnerSettlement(partner, currency), reconciliationSuspense(currency)];
    }
    case 'wallet.transfer':
      if (!facts.accountsById.has(accountId)) return [];
      return walletTransferAccounts(accountId, command.payload, facts.wallets);
    case 'hold.create': {
      const { wallet_id: walletId, currency } = command.payload;
      if (!facts.accountsById.has(accountId)) return [];
      // Another account's wallet, or none: refused, and no ledger account is made for it.
      if (walletId !== null && facts.wallets.get(walletId)?.account_id !== accountId) return [];
      return sideAccounts(accountId, walletId ?? MAIN_WALLET, currency);
    }
    case 'hold.capture': {
      const hold = facts.holds.get(command.payload.hold_id);
      if (!hold || hold.account_id !== accountId) return [];
      return holdAccounts(hold, captureRecipientOf(command.payload, facts, bankKey)?.id ?? null);
    }
    case 'hold.void':
    case 'hold.expire': {
      const hold = facts.holds.get(command.payload.hold_id);
      return hold && hold.account_id === accountId ? holdAccounts(hold) : [];
    }
    case 'refused':
      return [];
  }
}

/** The hold a command names, if any. */
export function holdIdOf(command: ParsedCommand): string[] {
  return command.type === 'hold.capture' || command.type === 'hold.void' || command.type === 'hold.expire' ? [command.payload.hold_id] : [];
}

/** The wallets the transfers of partner results came from: an answer may give the money back to one. */
export function walletIdsOfTransfers(transfers: Map<string, TransferRecord>): string[] {
  return [...transfers.values()].flatMap((t) => (t.from_wallet_id === null ? [] : [t.from_wallet_id]));
}

/** The wallets a command names (its sides other than "main"; the wallets transfers are sent from). */
export function walletIdsOf(command: ParsedCommand): string[] {
  if (command.type === 'wallet.transfer') return [command.payload.from_wallet_id, command.payload.to_wallet_id];
  if (command.type === 'hold.create' && command.payload.wallet_id !== null) return [command.payload.wallet_id];
  return transferCreatesOf(command).flatMap((t) => (t.from_wallet_id ? [t.from_wallet_id] : []));
}
