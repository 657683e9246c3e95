// An account's statement in one currency (DESIGN.md section 5e): the available balance at `from`,
// every posting on it until `to` with what it was for, and the balance at `to`. The lines are
// read in chunks and handed on as they come, so a long statement never sits in memory whole;
// opening_balance + the sum of the lines = closing_balance, to the unit of the currency's scale.
import type { Db } from '../db';
import { available } from '../../ledger/chart';
import type { CustomerEntryKind } from '../../ledger/entry';
import { formatAmount, Money, type Amount, type Currency } from '../../ledger/money';

const CHUNK = 2000;

export type StatementLineKind = 'transfer' | 'payment' | 'fx' | 'faucet' | 'wallet' | 'hold';

export interface AccountStatementLine {
  entry_id: string;
  posted_at: string;
  /** Signed: positive raised the balance. */
  amount: string;
  balance_after: string;
  kind: StatementLineKind;
  /** The transfer, payment or FX quote the movement belongs to; null for faucet credits. */
  reference_id: string | null;
  description: string;
}

export interface StatementPeriod { accountId: string; currency: Currency; from: Date; to: Date }

const KIND: Record<CustomerEntryKind, StatementLineKind> = {
  faucet_credit: 'faucet', internal_transfer: 'transfer', transfer_hold: 'transfer', transfer_settle: 'transfer', transfer_release: 'transfer', transfer_rehold: 'transfer',
  fx_conversion: 'fx', payment_settle: 'payment', payment_hold: 'payment', payment_release: 'payment',
  wallet_transfer: 'wallet', hold_create: 'hold', hold_increment: 'hold', hold_capture: 'hold', hold_release: 'hold', transfer_reversal: 'transfer',
  return_hold: 'transfer', return_settle: 'transfer', return_release: 'transfer',
};

function describe(kind: CustomerEntryKind, credit: boolean): string {
  switch (kind) {
    case 'faucet_credit': return 'sandbox test funds';
    case 'internal_transfer': return credit ? 'transfer received' : 'transfer sent';
    case 'transfer_hold': return 'transfer sent, held while the rail executes it';
    case 'transfer_settle': return 'transfer received through a rail';
    case 'transfer_release': return 'transfer failed or reversed: hold released';
    case 'transfer_rehold': return 'transfer paid by the partner after it had failed: held again to settle it';
    case 'fx_conversion': return credit ? 'conversion: bought' : 'conversion: sold';
    case 'payment_settle': return credit ? 'payment received (funds added)' : 'payment sent';
    case 'payment_hold': return 'payment sent, held while the partner executes it';
    case 'payment_release': return 'payment failed or cancelled: hold released';
    case 'wallet_transfer': return credit ? 'moved in from a wallet' : 'moved out to a wallet';
    case 'hold_create': return 'held for an authorization';
    case 'hold_increment': return 'authorization raised: held';
    case 'hold_capture': return credit ? 'hold captured: payment received' : 'hold captured';
    case 'hold_release': return 'hold voided or expired: released';
    case 'transfer_reversal': return credit ? 'transfer reversed: given back' : 'transfer reversed: returned to its sender';
    case 'return_hold': return 'transfer reversed: held while the partner returns it to its sender';
    case 'return_settle': return 'transfer reversed: returned by the partner';
    case 'return_release': return 'transfer reversal failed: released';
  }
}

interface PostingRow { seq: string; entry_id: string; amount: string; created_at: Date; kind: CustomerEntryKind; transfer_id: string | null; payment_id: string | null; fx_quote_id: string | null }

export class AccountStatement {
  private constructor(
    private readonly db: Db,
    private readonly period: StatementPeriod,
    private readonly ledgerAccountId: string | null,
    /** The available balance at `from`. */
    readonly opening: Amount,
  ) {}

  static async open(db: Db, period: StatementPeriod): Promise<AccountStatement> {
    const account = await db('ledger_accounts').where('code', available(period.accountId, period.currency).code).first('id');
    if (!account) return new AccountStatement(db, period, null, new Money(0));
    const { rows } = await db.raw('SELECT coalesce(sum(amount), 0)::text AS opening FROM postings WHERE ledger_account_id = ? AND created_at < ?', [account.id, period.from]);
    return new AccountStatement(db, period, account.id, new Money(rows[0].opening));
  }

  formatted(amount: Amount): string {
    return formatAmount(amount, this.period.currency);
  }

  /** The lines, oldest first, in chunks; `closing` holds the running balance once they are all read. */
  async *lines(closing: { balance: Amount }): AsyncGenerator<AccountStatementLine[]> {
    closing.balance = this.opening;
    if (this.ledgerAccountId === null) return;
    // A ledger account's postings are numbered in the order its balance changed (each takes the
    // account's row lock), so the statement walks them by that number.
    for (let after = '0'; ;) {
      const rows: PostingRow[] = await this.db('postings as p').join('journal_entries as e', 'e.id', 'p.entry_id')
        .where('p.ledger_account_id', this.ledgerAccountId).andWhere('p.seq', '>', after)
        .andWhere('p.created_at', '>=', this.period.from).andWhere('p.created_at', '<', this.period.to)
        .orderBy('p.seq').limit(CHUNK)
        .select('p.seq', 'p.entry_id', this.db.raw('p.amount::text AS amount'), 'p.created_at', 'e.kind', 'e.transfer_id', 'e.payment_id', 'e.fx_quote_id');
      if (rows.length === 0) return;
      yield rows.map((row) => {
        const amount = new Money(row.amount);
        closing.balance = closing.balance.plus(amount);
        return {
          entry_id: row.entry_id, posted_at: row.created_at.toISOString(), amount: this.formatted(amount), balance_after: this.formatted(closing.balance),
          kind: KIND[row.kind], reference_id: row.transfer_id ?? row.payment_id ?? row.fx_quote_id, description: describe(row.kind, amount.isPositive()),
        };
      });
      after = rows[rows.length - 1].seq;
    }
  }
}
