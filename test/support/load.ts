// A randomized transfer load among a group of sandbox accounts, the ledger invariants it must
// leave intact, and a collector of each account's event stream.
import { randomUUID } from 'node:crypto';
import type { Db } from '../../src/db';
import { signUp, type SignedUp } from './accounts';
import { call, eventually, refuseServerError } from './http';
import { fund } from './money';
import { prng } from './prng';
import { followEventStream } from './sse';

const centsText = (cents: number): string => `${Math.floor(cents / 100)}.${String(cents % 100).padStart(2, '0')}`;

export async function signUpGroup(baseUrl: string, size: number): Promise<SignedUp[]> {
  const group: SignedUp[] = [];
  for (let i = 0; i < size; i += 10) {
    group.push(...await Promise.all(Array.from({ length: Math.min(10, size - i) }, () => signUp(baseUrl))));
  }
  return group;
}

export async function fundGroup(baseUrl: string, group: SignedUp[], amountUsd: string): Promise<void> {
  await Promise.all(group.map((member) => fund(baseUrl, member.key, 'USD', amountUsd)));
}

export interface LoadResult {
  acknowledged: string[];
  refused: Map<string, number>;
}

/**
 * Sends `count` transfers, `concurrency` at a time: mostly internal, some to a member's bank
 * details (the fiat rail), half of those asking the rail for a failure (Sandbox-Scenario). A 202
 * (decision late) is retried with the same Idempotency-Key until the answer is final, as a
 * client would; a 5xx fails the load (it causes no outage of a dependency, so none is expected).
 */
export async function transferLoad(baseUrl: string, group: SignedUp[], count: number, concurrency: number, seed: number): Promise<LoadResult> {
  const random = prng(seed);
  const acknowledged: string[] = [];
  const refused = new Map<string, number>();
  let next = 0;
  const one = async () => {
    const sender = group[Math.floor(random() * group.length)];
    let recipient = group[Math.floor(random() * group.length)];
    if (recipient === sender) recipient = group[(group.indexOf(sender) + 1) % group.length];
    const external = random() < 0.25;
    const scenario = external && random() < 0.5 ? ['outage', 'decline', 'reverse'][Math.floor(random() * 3)] : null;
    const body: Record<string, unknown> = { amount: centsText(1 + Math.floor(random() * 4000)), currency: 'USD' };
    if (external) {
      const viban = recipient.vibans.find((v) => v.currency === 'USD')! as any;
      body.recipient = { email: recipient.email, name: 'Member', bank: { country: viban.bank_country, bank_name: viban.bank_name, account_number: viban.account_number, currency: 'USD' } };
    } else {
      body.recipient_email = recipient.email;
    }
    const key = randomUUID();
    for (let attempt = 0; attempt < 60; attempt++) {
      const response = await call(baseUrl, 'POST', '/v1/transfers', body, { token: sender.key, idempotencyKey: key, headers: scenario ? { 'Sandbox-Scenario': scenario } : {} });
      refuseServerError('POST', '/v1/transfers', response);
      if (response.status === 202) {
        await new Promise((resolve) => setTimeout(resolve, 250));
        continue;
      }
      if (response.status === 201 || response.status === 200) acknowledged.push(response.body.transfer_id);
      else refused.set(response.body.error, (refused.get(response.body.error) ?? 0) + 1);
      return;
    }
    throw new Error('a transfer got no final answer after 60 attempts');
  };
  await Promise.all(Array.from({ length: concurrency }, async () => {
    while (next++ < count) await one();
  }));
  return { acknowledged, refused };
}

export async function waitAllTerminal(db: Db, transferIds: string[], timeoutMs = 60_000): Promise<void> {
  const OPEN = `FROM transfers WHERE id = ANY(?::uuid[]) AND status NOT IN ('completed', 'failed', 'rolled_back')`;
  const started = Date.now();
  /** How many were open, every 5 s: a count that stops falling is a stall, one that falls slowly a slow machine. */
  const progress: string[] = [];
  let sampled = -Infinity;
  try {
    await eventually(async () => {
      const { rows } = await db.raw(`SELECT count(*)::int AS open ${OPEN}`, [transferIds]);
      const seconds = Math.round((Date.now() - started) / 1000);
      if (seconds - sampled >= 5) { progress.push(`${seconds} s: ${rows[0].open}`); sampled = seconds; }
      return rows[0].open === 0 ? true : undefined;
    }, timeoutMs, 'every transfer to reach a terminal state');
  } catch (error) {
    // Which transfers stayed open says where to look: the rail's, the book's, and in which state;
    // and the rail's own book says whether it was asked and what it answered.
    const { rows } = await db.raw(`SELECT partner, status, count(*)::int AS n, min(updated_at) AS oldest_change ${OPEN} GROUP BY 1, 2`, [transferIds]);
    const { rows: rail } = await db.raw(
      `SELECT coalesce(p.status, 'not at the rail') AS rail_status, p.due_status, count(*)::int AS n
         FROM (SELECT id::text AS reference ${OPEN} AND partner <> 'book') t LEFT JOIN mock_rails.payments p ON p.reference = t.reference
        GROUP BY 1, 2`, [transferIds]);
    throw new Error(`${(error as Error).message}; still open: ${JSON.stringify(rows)}; at the rail: ${JSON.stringify(rail)}; open over time: ${progress.join(', ')}`);
  }
}

/** The invariants of the ledger, each as a query that must return no rows. */
export const LEDGER_INVARIANTS: Record<string, string> = {
  'every journal entry balances per currency':
    'SELECT entry_id, currency FROM postings GROUP BY entry_id, currency HAVING sum(amount) <> 0',
  'every balance equals the sum of its postings':
    `SELECT la.code FROM ledger_accounts la LEFT JOIN (SELECT ledger_account_id, sum(amount) AS total FROM postings GROUP BY 1) p
     ON p.ledger_account_id = la.id WHERE la.balance <> coalesce(p.total, 0)`,
  'no customer balance is negative': `SELECT code FROM ledger_accounts WHERE kind <> 'system' AND balance < 0`,
  'all customer money came from the faucet': `SELECT currency FROM ledger_accounts GROUP BY currency HAVING sum(balance) <> 0`,
  "each account's events are numbered 1..n without a gap or a repeat":
    `SELECT account_id FROM account_events GROUP BY account_id
     HAVING min(account_seq) <> 1 OR max(account_seq) <> count(*) OR count(DISTINCT account_seq) <> count(*)
     UNION ALL
     SELECT e.account_id FROM account_events e LEFT JOIN account_event_sequences s USING (account_id)
      GROUP BY e.account_id, s.last_seq HAVING s.last_seq IS DISTINCT FROM max(e.account_seq)`,
  "each account event is its account's, under its number":
    `SELECT id FROM account_events WHERE (payload->>'account_id')::uuid IS DISTINCT FROM account_id OR (payload->>'account_seq')::bigint <> account_seq`,
  // A transfer completed late (released, then held again and settled) has one rehold, and one end more.
  // A hold's capture is its transfer's one move: paid at once, or into pending for the rail.
  'a transfer is held or moved once, and settled or released at most once':
    `SELECT transfer_id FROM journal_entries WHERE transfer_id IS NOT NULL GROUP BY transfer_id
     HAVING count(*) FILTER (WHERE kind IN ('internal_transfer', 'transfer_hold', 'hold_capture')) <> 1
         OR count(*) FILTER (WHERE kind = 'transfer_rehold') > 1
         OR count(*) FILTER (WHERE kind IN ('transfer_settle', 'transfer_release')) > 1 + count(*) FILTER (WHERE kind = 'transfer_rehold')`,
  'a quote is executed by one conversion, and a consumed quote has it':
    `SELECT q.id FROM fx_quotes q LEFT JOIN journal_entries je ON je.fx_quote_id = q.id AND je.kind = 'fx_conversion'
     GROUP BY q.id, q.consumed_at HAVING count(je.id) <> CASE WHEN q.consumed_at IS NULL THEN 0 ELSE 1 END`,
  "a conversion moves the quote's amounts, no more and no less":
    `SELECT je.id FROM journal_entries je JOIN fx_quotes q ON q.id = je.fx_quote_id
     JOIN postings p ON p.entry_id = je.id JOIN ledger_accounts la ON la.id = p.ledger_account_id AND la.kind = 'available'
     GROUP BY je.id, q.from_amount, q.to_amount, q.from_currency, q.to_currency
     HAVING sum(p.amount) FILTER (WHERE p.currency = q.from_currency) IS DISTINCT FROM -q.from_amount
         OR sum(p.amount) FILTER (WHERE p.currency = q.to_currency) IS DISTINCT FROM q.to_amount`,
  'the FX desk pays out at the mid-rate (within half a cent) and keeps the rest as spread':
    `WITH conversions AS (
       SELECT je.id, coalesce(q.from_amount, t.amount) AS x, coalesce(q.mid_rate, t.fx_mid_rate) AS mid, coalesce(q.to_amount, t.payout_amount) AS y,
              coalesce(q.from_currency, t.currency) AS from_currency, coalesce(q.to_currency, t.payout_currency) AS to_currency
       FROM journal_entries je LEFT JOIN fx_quotes q ON q.id = je.fx_quote_id
       LEFT JOIN transfers t ON t.id = je.transfer_id AND je.kind = 'transfer_settle' AND t.fx_rate IS NOT NULL
       WHERE q.id IS NOT NULL OR t.id IS NOT NULL),
     legs AS (
       SELECT c.id, c.x, c.mid, c.y,
              coalesce(sum(p.amount) FILTER (WHERE la.code = 'sys:fx:position:' || c.from_currency), 0) AS took,
              coalesce(sum(p.amount) FILTER (WHERE la.code = 'sys:fx:position:' || c.to_currency), 0) AS paid,
              coalesce(sum(p.amount) FILTER (WHERE la.code = 'sys:fx:spread:' || c.to_currency), 0) AS spread
       FROM conversions c JOIN postings p ON p.entry_id = c.id JOIN ledger_accounts la ON la.id = p.ledger_account_id
       GROUP BY c.id, c.x, c.mid, c.y)
     SELECT id FROM legs WHERE took <> x OR abs(x * mid + paid) > 0.005 OR spread <> -paid - y OR spread < 0`,
  'a payout is held once; a payment is settled or released once it ends, and never before':
    `SELECT p.id FROM payments p LEFT JOIN journal_entries je ON je.payment_id = p.id GROUP BY p.id, p.direction, p.status
     HAVING count(je.id) FILTER (WHERE je.kind = 'payment_hold') <> CASE WHEN p.direction = 'outbound' THEN 1 ELSE 0 END
         OR count(je.id) FILTER (WHERE je.kind IN ('payment_settle', 'payment_release')) <> CASE
              WHEN p.status = 'completed' THEN 1 WHEN p.status IN ('failed', 'cancelled') AND p.direction = 'outbound' THEN 1 ELSE 0 END`,
  "a transfer's reversed_amount is the sum of its reversals not failed":
    `SELECT t.id FROM transfers t WHERE t.reversed_amount <> (
       SELECT coalesce(sum((r->>'amount')::numeric) FILTER (WHERE r->>'status' <> 'failed'), 0) FROM jsonb_array_elements(t.reversals) r)`,
  // A return with a part to give back is held when asked for; it is settled once completed, released once failed.
  'a return is held once, and settled or released once it ends':
    `SELECT t.id FROM transfers t WHERE t.partner <> 'book' AND jsonb_array_length(t.reversals) > 0 AND (
       SELECT (count(*) FILTER (WHERE (r->>'payout_amount')::numeric > 0), count(*) FILTER (WHERE r->>'status' = 'completed'), count(*) FILTER (WHERE r->>'status' = 'failed'))
         FROM jsonb_array_elements(t.reversals) r) IS DISTINCT FROM (
       SELECT (count(*) FILTER (WHERE kind = 'return_hold'), count(*) FILTER (WHERE kind = 'return_settle'), count(*) FILTER (WHERE kind = 'return_release'))
         FROM journal_entries je WHERE je.transfer_id = t.id)`,
  'a terminal transfer has its final entry':
    `SELECT t.id FROM transfers t WHERE t.partner <> 'book' AND t.status IN ('completed', 'failed', 'rolled_back')
     AND NOT EXISTS (SELECT 1 FROM journal_entries je WHERE je.transfer_id = t.id AND je.kind IN ('transfer_settle', 'transfer_release'))`,
};

export async function violations(db: Db): Promise<Record<string, unknown[]>> {
  const found: Record<string, unknown[]> = {};
  for (const [name, sql] of Object.entries(LEDGER_INVARIANTS)) {
    const { rows } = await db.raw(`${sql} LIMIT 5`);
    if (rows.length > 0) found[name] = rows;
  }
  return found;
}

export interface CollectedEvents {
  ids: Set<string>;
  /** account_seq of every event delivered, in delivery order, over every connection. */
  seqs: number[];
  /** Connections opened (1 + reconnections with Last-Event-ID). */
  connections: number;
  close(): void;
}

/**
 * Reads an account's event stream in the background, as a client should: when the stream ends,
 * or every `reconnectEveryMs` when given, it reconnects with Last-Event-ID (SPEC.md section 6).
 */
export async function collectEvents(baseUrl: string, token: string, reconnectEveryMs?: number): Promise<CollectedEvents> {
  const collected: CollectedEvents = { ids: new Set(), seqs: [], connections: 0, close: () => { closed = true; current.abort(); } };
  let closed = false;
  let current = new AbortController();
  let lastId: string | null = null;
  const connect = async (): Promise<void> => {
    current = new AbortController();
    const connection = current;
    collected.connections++;
    const headers = lastId ? { 'last-event-id': lastId } : undefined;
    await followEventStream(baseUrl, token, (frame) => {
      if (!frame.id || !frame.data) return;
      collected.ids.add(frame.id);
      collected.seqs.push(JSON.parse(frame.data).account_seq);
      lastId = frame.id;
    }, connection.signal, headers, () => { if (!closed && connection === current) setTimeout(reconnect, 50); });
    // Reconnect on a timer once the client holds a cursor (without one it would start from "now").
    const arm = (): void => {
      setTimeout(() => {
        if (closed || connection !== current) return;
        if (lastId === null) arm();
        else connection.abort();
      }, reconnectEveryMs);
    };
    if (reconnectEveryMs) arm();
  };
  // A refused reconnection (the API restarting) is tried again until the collector is closed.
  const reconnect = (): void => { if (!closed) connect().catch(() => setTimeout(reconnect, 500)); };
  await connect();
  return collected;
}

export async function accountEventIds(db: Db, accountId: string): Promise<string[]> {
  const rows: Array<{ id: string }> = await db('account_events').where({ account_id: accountId }).select('id');
  return rows.map((r) => r.id);
}

export { call };
