// The ledger's commands: each kind of command on ledger.commands and the module that decides it
// (command.ts says what a module is). The round dispatches on this table alone, and the kinds of
// command are its rows (CommandType): adding a kind of money movement is its module (its payload's
// type, shape and checks, what it names, its accounts, its decision) and a row here.
import type { Refused } from '../outcome';
import { screenPayload } from '../screen';
import type { LedgerCommand, RefusedCommand, TakenCommand } from './command';
import { faucetCredit } from './faucet-credit';
import { fxExecute } from './fx-execute';
import { holdCapture } from './hold-capture';
import { holdCreate } from './hold-create';
import { holdIncrement } from './hold-increment';
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

export const COMMANDS = {
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
  'hold.increment': holdIncrement,
  'transfer.return_result': transferReturnResult,
} satisfies Record<string, LedgerCommand<unknown>>;

/** A kind of command the ledger decides: a row of the table. */
export type CommandType = keyof typeof COMMANDS;
export const COMMAND_TYPES = Object.keys(COMMANDS) as CommandType[];

/** Whether a message's type (any text read from Kafka) is a row of the table. */
export const isCommandType = (type: unknown): type is CommandType => typeof type === 'string' && Object.hasOwn(COMMANDS, type);

/** The module that decides a kind of command. */
export const commandOf = (type: CommandType): LedgerCommand<unknown> => COMMANDS[type];

/** A command of a round as its kind's module parsed it, or refused as it is (screen.ts): decided alone, with a final answer, touching nothing. */
export type ParsedCommand = TakenCommand<CommandType> | RefusedCommand;

/** A command's payload as its module takes it (its shape screened, then its own checks), or refused with a final answer. */
export function parsePayload(type: CommandType, accountId: string, payload: unknown): { payload: unknown } | { refusal: Refused } {
  const command = commandOf(type);
  const refusal = screenPayload(command.shape, accountId, payload);
  return refusal ? { refusal } : command.parse(payload);
}

export type { BankDetails, DecideContext, LedgerCommand, Needs } from './command';
export type { AccountFacts, BatchFacts, Locked } from './facts';
export { needsOf, type RoundNeeds } from './needs';
