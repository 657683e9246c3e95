// What a ledger command is to the round (ledger/commands/index.ts holds the table of them): its
// payload as screened, the records it names (locked and read as the round begins), the ledger accounts
// it may post to (locked next), and its decision, made under the lock in the round's order. A new
// kind of money movement is a module of this shape and a row in the table.
import type { BalanceBook } from '../balances';
import type { LedgerAccountRef } from '../chart';
import type { Decision } from '../decision';
import type { LedgerCommandEnvelope } from '../messages';
import type { Currency } from '../money';
import type { Refused } from '../outcome';
import type { PayloadShape } from '../screen';
import type { BatchFacts, Locked } from './facts';

/** Bank details a command pays to: the ledger looks for the account whose vIBAN they are. */
export interface BankDetails { accountNumber: string; currency: string }

/** What a command names, for the round to lock and read as it begins (each list merged over the round's commands). */
export interface Needs {
  /** The sending account's facts (its status, its email). */
  sender?: boolean;
  transfers?: string[];
  quotes?: string[];
  payments?: string[];
  wallets?: string[];
  holds?: string[];
  /** Recipients by email and by bank details. */
  emails?: string[];
  banks?: BankDetails[];
  /** What the faucet credited the account today in this currency. */
  faucet?: Currency;
}

export interface DecideContext<P> {
  commandId: string;
  accountId: string;
  payload: P;
  facts: BatchFacts;
  /** The records as locked, changed by the round's earlier commands. */
  locked: Locked;
  book: BalanceBook;
  now: Date;
}

export interface LedgerCommand<P> {
  /** What its payload must hold, checked before parse (screen.ts screenPayload). */
  shape: PayloadShape;
  /** The payload (its shape screened) as this command's, after the checks of its own, or refused with a final answer. */
  parse(payload: unknown): { payload: P } | { refusal: Refused };
  needs(payload: P, accountId: string): Needs;
  accounts(payload: P, accountId: string, facts: BatchFacts): LedgerAccountRef[];
  decide(context: DecideContext<P>): Decision;
}

/** A command of a round as its module parsed it: `T` is its kind, a row of the table (index.ts CommandType). */
export interface TakenCommand<T extends string = string> { envelope: LedgerCommandEnvelope; type: T; payload: unknown; command: LedgerCommand<unknown> }

/** A command refused as it is (screen.ts): decided alone, with a final answer, touching nothing. */
export interface RefusedCommand { envelope: LedgerCommandEnvelope; type: 'refused'; refusal: Refused }

/** The payload as it was screened: most commands need nothing more. */
export const asScreened = <P>(payload: unknown): { payload: P } => ({ payload: payload as P });
