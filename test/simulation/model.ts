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

/** One balance's share of the model (Model.range). */
interface BalanceIndex {
  /** Every certain delta on it, summed. */
  certain: Amount;
  /** Each learning of a command with a certain delta on it, in the order learned (`at`: its learnedAt then). */
  learned: Array<{ at: number; command: Command }>;
  /** The commands that may still move it. */
  open: Set<Command>;
}

export class Model {
  readonly commands: Command[] = [];
  private clock = 0;
  /**
   * Per balance, what a range needs, kept as answers arrive: summed over every command at each
   * check, a check cost as much as the run was long, and a long run's checks came to take the
   * simulation's whole core, which also carries the proxies the service talks through: late in
   * seed 21, a connection and a query took 2.2 s through the ledger's proxy to Postgres (56 ms
   * directly), and a test clock's advance of 45 steps took six minutes.
   */
  private readonly balancesByKey = new Map<string, BalanceIndex>();

  private indexOf(account: string, currency: string): BalanceIndex {
    const key = keyOf(account, currency);
    let index = this.balancesByKey.get(key);
    if (!index) this.balancesByKey.set(key, index = { certain: new Money(0), learned: [], open: new Set() });
    return index;
  }

  /** `command` learned now: its certain deltas `moved` added, and each of its balances told when. */
  private learned(command: Command, moved: Delta[]): void {
    command.certain.push(...moved);
    command.learnedAt = ++this.clock;
    for (const d of moved) { const index = this.indexOf(d.account, d.currency); index.certain = index.certain.plus(d.amount); }
    const seen = new Set<BalanceIndex>();
    for (const d of command.certain) {
      const index = this.indexOf(d.account, d.currency);
      if (!seen.has(index)) { seen.add(index); index.learned.push({ at: command.learnedAt, command }); }
    }
  }

  /** What `command` may still move is now `possible`. */
  private mayMove(command: Command, possible: Delta[]): void {
    for (const d of command.possible) this.indexOf(d.account, d.currency).open.delete(command);
    command.possible = possible;
    for (const d of possible) this.indexOf(d.account, d.currency).open.add(command);
  }

  begin(client: number, label: string, possible: Delta[], allowedFinal: string[] = []): Command {
    const command: Command = { id: this.commands.length, client, label, certain: [], possible: [], allowedFinal, resource: null, state: 'undecided', begunAt: ++this.clock, learnedAt: 0 };
    this.commands.push(command);
    this.mayMove(command, possible);
    return command;
  }

  /** The service refused it: it moved nothing, and never will. */
  refuse(command: Command): void {
    this.mayMove(command, []);
    command.state = 'refused';
  }

  /** Answered: `moved` is certain; `later` may still move (a hold's release, a payout's credit). */
  answer(command: Command, moved: Delta[], later: Delta[] = []): void {
    this.learned(command, moved);
    this.mayMove(command, later);
    command.state = later.length > 0 ? 'open' : 'final';
  }

  /** Ended: what moved at the end is certain, and nothing more may move. */
  end(command: Command, moved: Delta[]): void {
    this.learned(command, moved);
    this.mayMove(command, []);
    command.state = 'final';
  }

  /**
   * The least and the most the balance may be now, leaving out `except` (the command being checked).
   * What another command moved is certain for `except` only if it was learned before `except` was
   * begun: one learned since may have been decided after `except` (a refusal learned late, at the
   * end of a run, was decided before the credits learned meanwhile), so it counts as possible.
   */
  range(account: string, currency: string, except?: Command): { lo: Amount; hi: Amount } {
    const index = this.balancesByKey.get(keyOf(account, currency));
    if (!index) return { lo: new Money(0), hi: new Money(0) };
    const here = (deltas: Delta[]) => deltas.filter((d) => d.account === account && d.currency === currency);
    let lo = index.certain;
    let hi = index.certain;
    if (except) {
      for (const d of here(except.certain)) { lo = lo.minus(d.amount); hi = hi.minus(d.amount); }
      // Learned since `except` began (the newest learnings, back to its beginning): their credits
      // are not certain for the least, their debits not for the most.
      const late = new Set<Command>([except]);
      for (let i = index.learned.length - 1; i >= 0 && index.learned[i].at >= except.begunAt; i--) {
        const { command } = index.learned[i];
        if (late.has(command)) continue;
        late.add(command);
        for (const d of here(command.certain)) {
          if (d.amount.isNegative()) hi = hi.minus(d.amount); else lo = lo.minus(d.amount);
        }
      }
    }
    for (const command of index.open) {
      if (command === except) continue;
      for (const d of here(command.possible)) {
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
    return this.balancesByKey.get(keyOf(account, currency))?.certain ?? new Money(0);
  }

  /** The balances the model is certain of, per account and currency (each one a command moved for certain). */
  balances(): Map<string, Amount> {
    const totals = new Map<string, Amount>();
    for (const [key, index] of this.balancesByKey) if (index.learned.length > 0) totals.set(key, index.certain);
    return totals;
  }
}

export const balanceKey = keyOf;
