// The ledger's commands: each kind of command on ledger.commands and the module that decides it
// (command.ts says what a module is). The round dispatches on this table alone: adding a kind of
// money movement is its module and a row here (and its type in messages.ts and shape in screen.ts).
import type { CommandType } from '../messages';
import type { LedgerCommand } from './command';
import { faucetCredit } from './faucet-credit';
import { fxExecute } from './fx-execute';
import { holdCapture } from './hold-capture';
import { holdCreate } from './hold-create';
import { holdExpire, holdVoid } from './hold-release';
import { holdUpdate } from './hold-update';
import { paymentCreate } from './payment-create';
import { paymentUpdate } from './payment-update';
import { reconciliationAdjust } from './reconciliation-adjust';
import { transferBatch } from './transfer-batch';
import { transferCreate } from './transfer-create';
import { transferPartnerResult } from './transfer-partner-result';
import { transferReturnResult } from './transfer-return-result';
import { transferReverse } from './transfer-reverse';
import { transferUpdate } from './transfer-update';
import { walletTransfer } from './wallet-transfer';

export const COMMANDS: { readonly [T in CommandType]: LedgerCommand<unknown> } = {
  'faucet.credit': faucetCredit,
  'transfer.create': transferCreate,
  'transfer.partner_result': transferPartnerResult,
  'transfer.batch': transferBatch,
  'fx.execute': fxExecute,
  'payment.create': paymentCreate,
  'payment.update': paymentUpdate,
  'reconciliation.adjust': reconciliationAdjust,
  'wallet.transfer': walletTransfer,
  'hold.create': holdCreate,
  'hold.capture': holdCapture,
  'hold.void': holdVoid,
  'hold.expire': holdExpire,
  'transfer.reverse': transferReverse,
  'transfer.update': transferUpdate,
  'hold.update': holdUpdate,
  'transfer.return_result': transferReturnResult,
};

export type { BankDetails, DecideContext, LedgerCommand, Needs, ParsedCommand } from './command';
export { captureRecipientOf, recipientOf, type BatchFacts, type Locked } from './facts';
export { needsOf, type RoundNeeds } from './needs';
