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
  /**
   * Per balance, the commands that ever had a delta on it: a range or a balance reads these alone.
   * Read over every command, a check cost as much as the run was long, and a long run's checks
   * came to take the simulation's whole core, which also carries the proxies the service talks
   * through: late in seed 21, a connection and a query took 2.2 s through the ledger's proxy to
   * Postgres (56 ms directly), and a test clock's advance of 45 steps took six minutes.
   */
  private readonly byBalance = new Map<string, Set<Command>>();

  private touch(command: Command, deltas: Delta[]): void {
    for (const d of deltas) {
      const key = keyOf(d.account, d.currency);
      const commands = this.byBalance.get(key);
      if (commands) commands.add(command); else this.byBalance.set(key, new Set([command]));
    }
  }

  begin(client: number, label: string, possible: Delta[], allowedFinal: string[] = []): Command {
    const command: Command = { id: this.commands.length, client, label, certain: [], possible, allowedFinal, resource: null, state: 'undecided', begunAt: ++this.clock, learnedAt: 0 };
    this.commands.push(command);
    this.touch(command, possible);
    return command;
  }

  /** The service refused it: it moved nothing, and never will. */
  refuse(command: Command): void {
    command.possible = [];
    command.state = 'refused';
  }

  /** Answered: `moved` is certain; `later` may still move (a hold's release, a payout's credit). */
  answer(command: Command, moved: Delta[], later: Delta[] = []): void {
    this.touch(command, [...moved, ...later]);
    command.certain.push(...moved);
    command.learnedAt = ++this.clock;
    command.possible = later;
    command.state = later.length > 0 ? 'open' : 'final';
  }

  /** Ended: what moved at the end is certain, and nothing more may move. */
  end(command: Command, moved: Delta[]): void {
    this.touch(command, moved);
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
    for (const command of this.byBalance.get(keyOf(account, currency)) ?? []) {
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

  /** The balance the model is certain of, of one account in one currency. */
  balance(account: string, currency: string): Amount {
    let total = new Money(0);
    for (const command of this.byBalance.get(keyOf(account, currency)) ?? []) {
      for (const d of command.certain) if (d.account === account && d.currency === currency) total = total.plus(d.amount);
    }
    return total;
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
