// The reference model: per account and currency, the money certainly there and the range that
// may be there while commands are undecided; per command, what it has certainly moved and what it
// still may. A command is undecided from the moment it is sent until its client learns its final
// answer, so the ranges hold whatever the service did meanwhile: a check made against them never
// depends on timing.
import { Money, type Amount } from '../../ledger/money';

export interface Delta { account: string; currency: string; amount: Amount }

export interface Command {
  id: number;
  client: number;
  label: string;
  /** Moved for certain (the service answered that it did). */
  certain: Delta[];
  /** May still move, each independently (an answer not yet learned, a hold not yet settled or released). */
  possible: Delta[];
  /** The final statuses the command may end in, once created (transfers and payments). */
  allowedFinal: string[];
  resource: { type: 'transfer' | 'payment' | 'quote'; id: string } | null;
  state: 'undecided' | 'refused' | 'open' | 'final';
  /** When (the model's count of events) it was begun, and when its last certain move was learned. */
  begunAt: number;
  learnedAt: number;
}

const keyOf = (account: string, currency: string) => `${account}|${currency}`;

export class Model {
  readonly commands: Command[] = [];
  private clock = 0;

  begin(client: number, label: string, possible: Delta[], allowedFinal: string[] = []): Command {
    const command: Command = { id: this.commands.length, client, label, certain: [], possible, allowedFinal, resource: null, state: 'undecided', begunAt: ++this.clock, learnedAt: 0 };
    this.commands.push(command);
    return command;
  }

  /** The service refused it: it moved nothing, and never will. */
  refuse(command: Command): void {
    command.possible = [];
    command.state = 'refused';
  }

  /** Answered: `moved` is certain; `later` may still move (a hold's release, a payout's credit). */
  answer(command: Command, moved: Delta[], later: Delta[] = []): void {
    command.certain.push(...moved);
    command.learnedAt = ++this.clock;
    command.possible = later;
    command.state = later.length > 0 ? 'open' : 'final';
  }

  /** Ended: what moved at the end is certain, and nothing more may move. */
  end(command: Command, moved: Delta[]): void {
    command.certain.push(...moved);
    command.learnedAt = ++this.clock;
    command.possible = [];
    command.state = 'final';
  }

  /**
   * The least and the most the balance may be now, leaving out `except` (the command being checked).
   * What another command moved is certain for `except` only if it was learned before `except` was
   * begun: one learned since may have been decided after `except` (a refusal learned late, at the
   * end of a run, was decided before the credits learned meanwhile), so it counts as possible.
   */
  range(account: string, currency: string, except?: Command): { lo: Amount; hi: Amount } {
    let lo = new Money(0);
    let hi = new Money(0);
    for (const command of this.commands) {
      if (command === except) continue;
      const certain = !except || command.learnedAt < except.begunAt;
      for (const d of command.certain) {
        if (d.account !== account || d.currency !== currency) continue;
        if (certain || d.amount.isNegative()) lo = lo.plus(d.amount);
        if (certain || !d.amount.isNegative()) hi = hi.plus(d.amount);
      }
      for (const d of command.possible) {
        if (d.account !== account || d.currency !== currency) continue;
        if (d.amount.isNegative()) lo = lo.plus(d.amount); else hi = hi.plus(d.amount);
      }
    }
    return { lo, hi };
  }

  /** Commands that may still move money. */
  undecided(): Command[] {
    return this.commands.filter((c) => c.state === 'undecided' || c.state === 'open');
  }

  /** The balances the model is certain of, per account and currency. */
  balances(): Map<string, Amount> {
    const totals = new Map<string, Amount>();
    for (const command of this.commands) {
      for (const d of command.certain) totals.set(keyOf(d.account, d.currency), (totals.get(keyOf(d.account, d.currency)) ?? new Money(0)).plus(d.amount));
    }
    return totals;
  }
}

export const balanceKey = keyOf;
