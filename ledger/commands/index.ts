// The ledger's commands: each kind of command on ledger.commands and the module that decides it
// (command.ts says what a module is). The round dispatches on this table alone: adding a kind of
// money movement is its module (its payload's shape and checks, what it names, its decision) and a
// row here, with its payload's type in messages.ts (the API writes it too).
import type { CommandType } from '../messages';
import type { Refused } from '../outcome';
import { screenPayload } from '../screen';
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

/** A command's payload as its module takes it (its shape screened, then its own checks), or refused with a final answer. */
export function parsePayload(type: CommandType, accountId: string, payload: unknown): { payload: unknown } | { refusal: Refused } {
  const command = COMMANDS[type];
  const refusal = screenPayload(command.shape, accountId, payload);
  return refusal ? { refusal } : command.parse(payload);
}

export type { BankDetails, DecideContext, LedgerCommand, Needs, ParsedCommand } from './command';
export type { AccountFacts, BatchFacts, Locked } from './facts';
export { needsOf, type RoundNeeds } from './needs';
