// One ledger round's transaction, in as few round trips to Postgres as the decision allows: the
// round's records are locked and its facts read after them by one message (BEGIN, every SELECT ...
// FOR UPDATE of its records, then the reads: gather), its ledger accounts locked by a second (the
// accounts a command posts to follow from those facts: a recipient found by email), the round is
// decided in between, and written by one prepared statement, then committed (a large round by
// COPY, then COMMIT). The small round's
// write is a named statement each connection plans once: planned afresh every round, its
// sixteen CTEs were half of the round's time at light load. Concurrent rounds never wait on each
// other in a circle: transfers, quotes, payments, holds and wallets by id, then ledger accounts by
// code, then the accounts' event counters (round-write.ts). The lock message sets the round's
// statement timeout for the whole transaction (pg/timeouts.ts): a write that waits too long is
// cancelled by Postgres, and the COMMIT is sent only after the write succeeded, so no round is
// committed after the client stopped waiting for it and its handler reported it failed; and its
// bound on the transaction left idle, so a round whose client is gone releases its locks.
import type { Knex } from 'knex';
import { randomUUID } from 'node:crypto';
import type pg from 'pg';
import { roundBounds } from '../pg/timeouts';
import { inlineSql } from '../pg/inline';
import type { FxQuoteRecord } from '../fx-quotes';
import { Money } from '../money';
import type { PaymentRecord } from '../payments';
import { oneStatementRound, ONE_STATEMENT_COMMANDS_MAX, writeLargeRound } from './round-write';
import type { BatchWrite, Locked, LockRequest, RoundTransaction } from '../ports';
import type { TransferRecord } from '../transfers';
import type { WalletRecord } from '../wallets';
import type { HoldRecord } from '../holds';
import type { BalanceAlertRecord } from '../alerts';
import type { LedgerAccountRef } from '../chart';
import { wallNow } from '../clock';
import { isCanonicalUuid } from '../screen';
import { factsReads, noFacts } from './reads';
import type { FactsRequest, Gathered } from '../ports';

const lockById = (table: string) => `SELECT * FROM ${table} WHERE id = ANY($1::uuid[]) ORDER BY id FOR UPDATE`;
const LOCK_WALLETS = 'SELECT * FROM wallets WHERE id = ANY($1::uuid[]) ORDER BY id FOR SHARE';
const READ_ALERTS = 'SELECT id, account_id, wallet_id, currency, direction, threshold::text AS threshold FROM balance_alerts WHERE account_id = ANY($1::uuid[])';
const LOCK_LEDGER_ACCOUNTS = 'SELECT id, code, balance FROM ledger_accounts WHERE code = ANY($1::text[]) ORDER BY code FOR UPDATE';

/** The name the small round's write is prepared under on each connection. */
const ROUND_WRITE_STATEMENT = 'ledger_round_write';
/**
 * The write's parameters are JSON arrays whose sizes the planner cannot see: its plan does not
 * depend on their values, and Postgres would otherwise plan it afresh for its first five runs.
 */
const GENERIC_PLANS = 'SET LOCAL plan_cache_mode = force_generic_plan';

/** An id no record has: the warm-up's locks take nothing. */
const NO_ID = '00000000-0000-0000-0000-000000000000';
const EMPTY_ROUND = (): BatchWrite => ({
  entries: [], balances: [], newTransfers: [], changedTransfers: [], transitions: [], consumedQuotes: [], newPayments: [], changedPayments: [],
  paymentTransitions: [], processed: [], outbox: [], lateCompletions: [], roundId: randomUUID(), now: wallNow(),
});

const byId = <Row extends { id: string }>(rows: Row[]) => new Map(rows.map((row) => [row.id, row]));

type LockKind = 'transfers' | 'quotes' | 'payments' | 'holds' | 'wallets' | 'accounts' | 'alerts';
interface LockStatement { kind: LockKind; sql: string }

/** What lock statements found, by kind (`refsByCode`: the ledger accounts asked for). */
function lockedOf(statements: LockStatement[], rows: unknown[][], refsByCode: Map<string, LedgerAccountRef>): Locked {
  const rowsOf = (kind: LockKind) => {
    const index = statements.findIndex((s) => s.kind === kind);
    return index < 0 ? [] : rows[index];
  };
  return {
    transfers: byId(rowsOf('transfers') as TransferRecord[]),
    quotes: byId(rowsOf('quotes') as FxQuoteRecord[]),
    payments: byId(rowsOf('payments') as PaymentRecord[]),
    wallets: byId(rowsOf('wallets') as WalletRecord[]),
    holds: byId(rowsOf('holds') as HoldRecord[]),
    alerts: rowsOf('alerts') as BalanceAlertRecord[],
    balances: (rowsOf('accounts') as Array<{ id: string; code: string; balance: string }>).map((r) => ({ id: r.id, ref: refsByCode.get(r.code)!, balance: new Money(r.balance) })),
  };
}

export class LedgerRound implements RoundTransaction {
  /** BEGIN was sent and neither COMMIT nor ROLLBACK since. */
  private open = false;

  /** `bounds`: the round's `SET LOCAL`s of its bounds (pg/timeouts.ts roundBounds), sent after its BEGIN. */
  private constructor(private readonly client: pg.ClientBase, private readonly bounds: string[]) {}

  /**
   * Runs `work` on a connection of its own; a round left open by a failure is rolled back. Each
   * statement of the round may run `statementTimeoutMs` on the server (default
   * LOCAL_STATEMENT_TIMEOUT_MS_DEFAULT), and the transaction wait `idleTimeoutMs` between two
   * (default LOCAL_IDLE_TIMEOUT_MS) before the server ends it.
   */
  static async run<T>(db: Knex, work: (round: LedgerRound) => Promise<T>, statementTimeoutMs?: number, idleTimeoutMs?: number): Promise<T> {
    const bounds = roundBounds(statementTimeoutMs, idleTimeoutMs);
    const client = (await db.client.acquireConnection()) as pg.Client;
    const round = new LedgerRound(client, bounds);
    try {
      const result = await work(round);
      // A round that found nothing to decide (every command decided before) writes nothing.
      if (round.open) {
        round.open = false;
        await client.query('ROLLBACK');
      }
      return result;
    } catch (error) {
      if (round.open) await client.query('ROLLBACK').catch(() => undefined);
      throw error;
    } finally {
      await db.client.releaseConnection(client);
    }
  }

  /**
   * Readies `connections` of the pool for their first rounds (before the ledger says it is
   * ready): each gathers and takes the locks of a round that names nothing that exists and prepares the
   * small round's write with nothing in it, in a transaction rolled back. Cold, the first round
   * on each connection planned the sixteen CTEs and filled that backend's catalog caches while
   * a client waited.
   */
  static async warm(db: Knex, connections: number): Promise<void> {
    const clients = (await Promise.all(Array.from({ length: connections }, () => db.client.acquireConnection()))) as pg.Client[];
    try {
      await Promise.all(clients.map(async (client) => {
        const round = new LedgerRound(client, roundBounds());
        try {
          await round.gather({
            commands: [{ id: NO_ID, accountId: NO_ID, idempotencyKey: null }], senders: [NO_ID], transfers: [NO_ID], quotes: [NO_ID], payments: [NO_ID],
            holds: [NO_ID], wallets: [NO_ID], emails: [], banks: [], faucets: [],
          });
          await round.lock({ refs: [{ code: 'warm-up', accountId: null, kind: 'available', currency: 'USD' }], alertAccountIds: [NO_ID] });
          const { text, params } = oneStatementRound(EMPTY_ROUND(), []);
          await client.query({ name: ROUND_WRITE_STATEMENT, text, values: params });
        } finally {
          await client.query('ROLLBACK');
        }
      }));
    } finally {
      await Promise.all(clients.map((client) => db.client.releaseConnection(client)));
    }
  }

  /** The statements that lock what `request` names, in the global lock order. */
  private static lockStatements(request: Partial<LockRequest>): LockStatement[] {
    const statements: LockStatement[] = [];
    const add = (kind: LockKind, sql: string, ids: string[] | undefined) => {
      // Only a uuid can name a record: another id ("main" for a wallet, or a typo) names none.
      const wanted = [...new Set(ids ?? [])].filter((id) => kind === 'accounts' || isCanonicalUuid(id));
      if (wanted.length > 0) statements.push({ kind, sql: inlineSql(sql, [wanted]) });
    };
    add('transfers', lockById('transfers'), request.transferIds);
    add('quotes', lockById('fx_quotes'), request.quoteIds);
    add('payments', lockById('payments'), request.paymentIds);
    add('holds', lockById('holds'), request.holdIds);
    // Wallets before ledger accounts: closing a wallet takes them in this order too (src/wallets).
    add('wallets', LOCK_WALLETS, request.walletIds);
    add('accounts', LOCK_LEDGER_ACCOUNTS, [...new Set((request.refs ?? []).map((r) => r.code))]);
    add('alerts', READ_ALERTS, request.alertAccountIds);
    return statements;
  }

  /**
   * Sends `statements` as one message, after BEGIN and the round's settings if the transaction is
   * not open yet; the rows of each statement in order.
   */
  private async send(statements: string[]): Promise<unknown[][]> {
    const prefix = this.open ? [] : ['BEGIN', ...this.bounds, GENERIC_PLANS];
    this.open = true;
    // SET LOCAL holds until the transaction ends: the large round's COPYs run under it too.
    const answer = await this.client.query([...prefix, ...statements].join(';\n'));
    const results = (Array.isArray(answer) ? answer : [answer]) as pg.QueryResult[];
    return results.slice(prefix.length).map((r) => r.rows);
  }

  /** Begins the transaction, locks the records the round names and reads its facts after them, in one message. */
  async gather(request: FactsRequest): Promise<Gathered> {
    const locks = LedgerRound.lockStatements({
      transferIds: request.transfers, quoteIds: request.quotes, paymentIds: request.payments, holdIds: request.holds, walletIds: request.wallets,
    });
    const reads = factsReads(request);
    const rows = await this.send([...locks.map((l) => l.sql), ...reads.map((r) => inlineSql(r.sql, r.params))]);
    const locked = lockedOf(locks, rows.slice(0, locks.length), new Map());
    const read = noFacts();
    reads.forEach((r, i) => r.keep(rows[locks.length + i], read));
    return {
      known: read.known,
      facts: {
        accountsById: read.byId, accountsByEmail: read.byEmail, accountsByBank: read.byBank, clockTimes: read.clockTimes, faucetToday: read.faucetToday,
        transfers: locked.transfers, quotes: locked.quotes, payments: locked.payments, wallets: locked.wallets, holds: locked.holds,
      },
    };
  }

  /** Takes the locks `request` names (and begins the transaction if gather did not), in one message. */
  async lock(request: LockRequest): Promise<Locked> {
    const statements = LedgerRound.lockStatements(request);
    const rows = await this.send(statements.map((s) => s.sql));
    return lockedOf(statements, rows, new Map(request.refs.map((r) => [r.code, r])));
  }

  /**
   * Writes the decided round, removes the unpublished marks of `publishedRounds` (earlier rounds
   * Kafka has since acknowledged), and commits. A round of at most `oneStatementMax` commands is
   * one prepared statement, then the COMMIT (a statement cancelled by the timeout fails the round:
   * the COMMIT is not sent). On return the round's account events carry their numbers.
   */
  async commit(batch: BatchWrite, publishedRounds: string[] = [], oneStatementMax = ONE_STATEMENT_COMMANDS_MAX): Promise<void> {
    // A transfer batch is one command of up to 1,000 entries: its size is in its rows, which COPY
    // writes fastest (a batch of 1,000 took 1.0-1.5 s by the one statement, 0.3-0.4 s by COPY).
    if (batch.processed.length <= oneStatementMax && batch.entries.length <= oneStatementMax * 4) {
      const { text, params, done } = oneStatementRound(batch, publishedRounds);
      // A named statement, planned once per connection: planned afresh, its sixteen CTEs cost more
      // than the rest of the round. The COMMIT follows only once the write succeeded.
      const answer = await this.client.query({ name: ROUND_WRITE_STATEMENT, text, values: params });
      await this.client.query('COMMIT');
      this.open = false;
      done(answer.rows[0]);
      return;
    }
    const consumed = await writeLargeRound(this.client, batch, publishedRounds);
    // The quotes were locked and found unconsumed: anything else is a bug, and the round must not commit.
    if (consumed !== batch.consumedQuotes.length) throw new Error(`${batch.consumedQuotes.length} quotes executed but ${consumed} consumed`);
    await this.client.query('COMMIT');
    this.open = false;
  }
}
