// The finance views (DESIGN.md section 5e): an account's statement for its own finance team, and
// the operator's trial balance and journal export. Statements and the journal stream their body
// as it is read, in JSON (JSON Lines for the journal) or CSV as the Accept header asks.
import { CURRENCIES, type Currency } from '../../ledger/money';
import { accountIdQuerySchema, actingAccountId } from '../http/acting-account';
import type { Db } from '../db';
import { DomainError } from '../domain-error';
import { instantOf, instantOrDay, windowBound, windowEndOf } from '../http/dates';
import type { RouteDef } from '../http/route';
import { csvText, streamed, wantsCsv } from '../http/streamed-answers';
import { AccountStatement, type AccountStatementLine } from './account-statement';
import { csvRow } from './formats';
import { journal, JOURNAL_CSV_COLUMNS, trialBalance } from './trial-balance';
import { wallNow } from '../clock';

const DAY_MS = 86_400_000;
const decimal = { type: 'string', description: 'a decimal amount at the currency\'s scale' };

/** The `from`/`to` of a query (dates.ts: a date in `to` includes that day), `to` after `from`; by default the `defaultSpanMs` up to now. */
function period(query: { from?: string; to?: string }, defaultSpanMs: number): { from: Date; to: Date } {
  const to = query.to ? windowEndOf(query.to, 'to') : wallNow();
  const from = query.from ? instantOf(query.from, 'from') : new Date(to.getTime() - defaultSpanMs);
  if (from.getTime() >= to.getTime()) throw new DomainError('invalid_request', 'from must be before to', 'from');
  return { from, to };
}

const STATEMENT_LINE_SCHEMA = {
  type: 'object', required: ['entry_id', 'posted_at', 'amount', 'balance_after', 'kind', 'reference_id', 'description'],
  properties: {
    entry_id: { type: 'string', format: 'uuid' }, posted_at: { type: 'string', format: 'date-time' },
    amount: { ...decimal, description: 'signed: positive raised the balance' }, balance_after: decimal,
    kind: { type: 'string', enum: ['transfer', 'payment', 'fx', 'faucet', 'wallet', 'hold'] },
    reference_id: { type: ['string', 'null'], description: 'the transfer, payment or FX quote; null for faucet credits' }, description: { type: 'string' },
  },
};
const STATEMENT_SCHEMA = {
  type: 'object', required: ['currency', 'from', 'to', 'opening_balance', 'closing_balance', 'lines'],
  properties: {
    currency: { type: 'string' }, from: { type: 'string', format: 'date-time' }, to: { type: 'string', format: 'date-time' },
    opening_balance: { ...decimal, description: 'the available balance at from' }, closing_balance: { ...decimal, description: 'the available balance at to: opening_balance + the sum of the lines' },
    lines: { type: 'array', items: STATEMENT_LINE_SCHEMA, description: 'oldest first' },
  },
};
const STATEMENT_CSV_COLUMNS = ['entry_id', 'posted_at', 'amount', 'balance_after', 'kind', 'reference_id', 'description'] as const;

async function* statementJson(statement: AccountStatement, head: Record<string, string>): AsyncGenerator<string> {
  const closing = { balance: statement.opening };
  yield `${JSON.stringify(head).slice(0, -1)},"opening_balance":"${statement.formatted(statement.opening)}","lines":[`;
  let first = true;
  for await (const lines of statement.lines(closing)) {
    yield `${first ? '' : ','}${lines.map((line) => JSON.stringify(line)).join(',')}`;
    first = false;
  }
  yield `],"closing_balance":"${statement.formatted(closing.balance)}"}`;
}

async function* statementCsv(statement: AccountStatement): AsyncGenerator<string> {
  yield `${STATEMENT_CSV_COLUMNS.join(',')}\n`;
  for await (const lines of statement.lines({ balance: statement.opening })) {
    yield lines.map((line: AccountStatementLine) => csvRow(STATEMENT_CSV_COLUMNS, line)).join('');
  }
}

const TRIAL_BALANCE_SCHEMA = {
  type: 'object', required: ['at', 'accounts', 'totals'],
  properties: {
    at: { type: 'string', format: 'date-time' },
    accounts: {
      type: 'array',
      items: {
        type: 'object', required: ['ledger_account', 'account_id', 'kind', 'currency', 'debits', 'credits', 'net'],
        properties: {
          ledger_account: { type: 'string', description: 'acct:<account>:available:<currency>, sys:faucet:<currency>, sys:partner:<partner>:<currency>, ...' },
          account_id: { type: ['string', 'null'], description: 'the customer account; null for system accounts' }, kind: { type: 'string', enum: ['available', 'pending', 'system', 'held', 'wallet_available', 'wallet_held'] },
          currency: { type: 'string' }, debits: { ...decimal, description: 'sum of postings that lowered the balance' }, credits: { ...decimal, description: 'sum of postings that raised it' },
          net: { ...decimal, description: 'credits − debits: the balance at `at`' },
        },
      },
    },
    totals: {
      type: 'array', description: 'per currency; net is always zero',
      items: { type: 'object', required: ['currency', 'debits', 'credits', 'net'], properties: { currency: { type: 'string' }, debits: decimal, credits: decimal, net: decimal } },
    },
  },
};

async function* journalLines(db: Db, from: Date, to: Date): AsyncGenerator<string> {
  for await (const chunk of journal(db, from, to)) yield chunk.map((entry) => `${JSON.stringify(entry)}\n`).join('');
}

async function* journalCsv(db: Db, from: Date, to: Date): AsyncGenerator<string> {
  yield `${JOURNAL_CSV_COLUMNS.join(',')}\n`;
  for await (const chunk of journal(db, from, to)) {
    yield chunk.flatMap(({ postings, ...entry }) => postings.map((posting) => csvRow(JOURNAL_CSV_COLUMNS, { ...entry, ...posting }))).join('');
  }
}

export function financeRoutes(db: Db): RouteDef[] {
  return [
    {
      method: 'GET', path: '/v1/accounts/me/statement', operationId: 'getMyStatement', tag: 'finance',
      summary: 'The account\'s statement in one currency: opening balance, every movement, closing balance (JSON, or CSV with Accept: text/csv)',
      auth: { kind: 'key', scope: 'transactions:read' },
      query: {
        type: 'object', additionalProperties: false, required: ['currency'],
        properties: {
          currency: { type: 'string', enum: [...CURRENCIES] }, from: windowBound('from', 'the start; default: 24 hours before to'),
          to: windowBound('to', 'the end; default: now'), account_id: accountIdQuerySchema,
        },
      },
      response: { status: 200, description: 'the statement', schema: STATEMENT_SCHEMA, alternatives: [{ contentType: 'text/csv', schema: csvText(`the lines, with a header row: ${STATEMENT_CSV_COLUMNS.join(',')}`) }] },
      handler: async (request) => {
        const query = request.query as { currency: Currency; from?: string; to?: string };
        const { from, to } = period(query, DAY_MS);
        const statement = await AccountStatement.open(db, { accountId: actingAccountId(request), currency: query.currency, from, to });
        if (wantsCsv(request.koa)) return { status: 200, body: streamed(statementCsv(statement)), headers: { 'Content-Type': 'text/csv; charset=utf-8' } };
        const head = { currency: query.currency, from: from.toISOString(), to: to.toISOString() };
        return { status: 200, body: streamed(statementJson(statement, head)), headers: { 'Content-Type': 'application/json; charset=utf-8' } };
      },
    },
    {
      method: 'GET', path: '/v1/ledger/trial-balance', operationId: 'getTrialBalance', tag: 'finance',
      summary: 'Every ledger account\'s debits, credits and net at an instant; each currency nets to zero (master key)', auth: { kind: 'admin' },
      query: { type: 'object', additionalProperties: false, properties: { at: instantOrDay('the instant; default: now') } },
      response: { status: 200, description: 'the trial balance', schema: TRIAL_BALANCE_SCHEMA },
      handler: async (request) => {
        const { at } = request.query as { at?: string };
        return { status: 200, body: await trialBalance(db, at ? instantOf(at, 'at') : wallNow()) };
      },
    },
    {
      method: 'GET', path: '/v1/ledger/journal', operationId: 'exportJournal', tag: 'finance',
      summary: 'Every journal entry and posting between two instants, streamed: JSON Lines (one entry per line), or CSV (one posting per row) with Accept: text/csv (master key)',
      auth: { kind: 'admin' },
      query: {
        type: 'object', additionalProperties: false,
        properties: { from: windowBound('from', 'the start; default: 24 hours before to'), to: windowBound('to', 'the end; default: now') },
      },
      response: {
        status: 200, description: 'the journal, oldest entry first', contentType: 'application/x-ndjson',
        schema: csvText('one JSON object per line: { entry_id, kind, posted_at, command_id, transfer_id, payment_id, fx_quote_id, postings: [{ posting_id, ledger_account, account_id, currency, amount, balance_after }] }'),
        alternatives: [{ contentType: 'text/csv', schema: csvText(`one row per posting, with a header row: ${JOURNAL_CSV_COLUMNS.join(',')}`) }],
      },
      handler: async (request) => {
        const { from, to } = period(request.query as { from?: string; to?: string }, DAY_MS);
        if (wantsCsv(request.koa, 'application/x-ndjson')) return { status: 200, body: streamed(journalCsv(db, from, to)), headers: { 'Content-Type': 'text/csv; charset=utf-8' } };
        return { status: 200, body: streamed(journalLines(db, from, to)), headers: { 'Content-Type': 'application/x-ndjson; charset=utf-8' } };
      },
    },
  ];
}
