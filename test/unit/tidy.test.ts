// House rules checked by a test rather than by memory (STYLE.md): money never passes through a
// JS number, the ledger domain stays free of HTTP and Kafka, each folder imports only what the
// README's map allows it, no module imports itself through others, and each ledger command lives
// in the module named for its kind, with its row in the table.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { COMMANDS } from '../../ledger/commands';

const ROOT = path.join(__dirname, '..', '..', '..');

function sources(folder: string): Array<{ file: string; text: string }> {
  const found: Array<{ file: string; text: string }> = [];
  for (const entry of fs.readdirSync(path.join(ROOT, folder), { withFileTypes: true })) {
    const relative = path.join(folder, entry.name);
    if (entry.isDirectory()) found.push(...sources(relative));
    else if (/\.tsx?$/.test(entry.name)) found.push({ file: relative, text: fs.readFileSync(path.join(ROOT, relative), 'utf8') });
  }
  return found;
}

/**
 * What each folder may import besides itself (README, "Where things live"). A folder is
 * `ledger`, `consumers/<name>` or `src/<name>` (a folder or a single file). Dependencies point
 * from the edges (routes, consumers, process roles) towards the domain and the plumbing.
 */
const MAY_IMPORT: Record<string, string[]> = {
  // The edges: process roles and consumers.
  'src/main': ['src/config', 'src/log', 'src/roles', 'src/runtime'],
  'src/roles': ['consumers/ledger', 'consumers/notifier', 'consumers/partners', 'consumers/request-logs', 'consumers/webhooks', 'src/accounts', 'src/auth', 'src/balance-alerts',
    'src/balances', 'src/config', 'src/customers', 'src/dashboard-host', 'src/fx', 'src/guards', 'src/holds', 'src/http', 'src/idempotency', 'src/kafka', 'src/ledger-client', 'src/log',
    'src/mock-rails', 'src/notifications', 'src/operations', 'src/outbox', 'src/partner-links', 'src/partners', 'src/payments', 'src/reconciliation', 'src/request-logs', 'src/runtime',
    'src/scheduled-transfers', 'src/statements', 'src/test-clocks', 'src/transfer-batches', 'src/transfers', 'src/vault', 'src/wallets', 'src/warm-up', 'src/webhooks'],
  // The ledger's consumer runs the due runs of scheduled transfers beside it (the surface's runs.ts).
  // ... and advances test clocks, doing what fell due for their accounts (the surface's clocks.ts).
  // ... and publishes its rounds' outbox, sweeping what a crashed process left (src/outbox).
  // Its workers hear Postgres announce an advance or a new schedule (src/db's channel listener).
  'consumers/ledger': ['ledger', 'src/db', 'src/kafka', 'src/log', 'src/outbox', 'src/runtime', 'src/scheduled-transfers', 'src/test-clocks', 'src/warm-up'],
  'consumers/notifier': ['ledger', 'src/kafka', 'src/log', 'src/notifications', 'src/runtime'],
  'consumers/partners': ['ledger', 'src/domain-error', 'src/kafka', 'src/log', 'src/partner-links', 'src/partners', 'src/reconciliation', 'src/runtime'],
  'consumers/webhooks': ['ledger', 'src/kafka', 'src/log', 'src/notifications', 'src/outbox', 'src/runtime', 'src/vault', 'src/webhooks'],
  'consumers/request-logs': ['ledger', 'src/db', 'src/kafka', 'src/log', 'src/request-logs', 'src/runtime', 'src/transient'],
  // One folder per surface (DESIGN.md section 3): its routes, its service code and its read model.
  // A surface may use another's service code (a payment names a customer), never its routes.
  'src/accounts': ['ledger', 'src/auth', 'src/config', 'src/countries', 'src/db', 'src/domain-error', 'src/guards', 'src/http', 'src/idempotency', 'src/ledger-client'],
  'src/customers': ['ledger', 'src/countries', 'src/db', 'src/domain-error', 'src/http', 'src/idempotency'],
  'src/transfers': ['ledger', 'src/config', 'src/countries', 'src/db', 'src/domain-error', 'src/http', 'src/idempotency', 'src/ledger-client', 'src/partners'],
  'src/transfer-batches': ['ledger', 'src/db', 'src/domain-error', 'src/http', 'src/idempotency', 'src/ledger-client', 'src/transfers'],
  // Its runs are written with their events (src/outbox) by the worker beside the ledger.
  'src/scheduled-transfers': ['ledger', 'src/db', 'src/domain-error', 'src/http', 'src/idempotency', 'src/kafka', 'src/outbox', 'src/runtime', 'src/transfers'],
  'src/test-clocks': ['src/config', 'src/db', 'src/domain-error', 'src/http'],
  'src/fx': ['ledger', 'src/config', 'src/db', 'src/domain-error', 'src/http', 'src/idempotency', 'src/ledger-client'],
  'src/payments': ['ledger', 'src/config', 'src/countries', 'src/customers', 'src/db', 'src/domain-error', 'src/http', 'src/idempotency', 'src/ledger-client', 'src/partner-links',
    'src/partners'],
  'src/partner-links': ['src/config', 'src/customers', 'src/db', 'src/domain-error', 'src/http', 'src/idempotency', 'src/log', 'src/partners', 'src/vault'],
  'src/wallets': ['ledger', 'src/balances', 'src/db', 'src/domain-error', 'src/http', 'src/idempotency', 'src/ledger-client'],
  'src/holds': ['ledger', 'src/db', 'src/domain-error', 'src/http', 'src/idempotency', 'src/ledger-client', 'src/transfers'],
  'src/balances': ['ledger', 'src/db', 'src/domain-error', 'src/http'],
  'src/balance-alerts': ['ledger', 'src/db', 'src/domain-error', 'src/http', 'src/idempotency'],
  'src/webhooks': ['ledger', 'src/config', 'src/db', 'src/domain-error', 'src/http', 'src/idempotency', 'src/log', 'src/retry-after', 'src/vault'],
  'src/notifications': ['ledger', 'src/db', 'src/domain-error', 'src/http', 'src/log'],
  'src/request-logs': ['src/auth', 'src/db', 'src/domain-error', 'src/http', 'src/kafka', 'src/log', 'src/redaction'],
  'src/statements': ['ledger', 'src/db', 'src/domain-error', 'src/http'],
  'src/reconciliation': ['ledger', 'src/auth', 'src/db', 'src/domain-error', 'src/http', 'src/idempotency', 'src/kafka', 'src/ledger-client', 'src/log', 'src/outbox', 'src/partners',
    'src/runtime', 'src/statements'],
  // The operator's routes: health and readiness, dead letters, outbox rounds set aside.
  'src/operations': ['src/http', 'src/kafka', 'src/outbox', 'src/runtime'],
  'src/dashboard-host': [],
  'src/mock-rails': ['src/db', 'src/log', 'src/partners', 'src/runtime'],
  // The CLI is a client of /v1 alone (DESIGN.md section 3): nothing of the server, only the
  // event-stream reader every client of GET /v1/notifications shares.
  'src/cli': ['src/event-stream'],
  // The browser dashboard is a client of the public API only: of the service, that reader alone.
  'src/dashboard': ['src/event-stream'],
  // What surfaces share: the ledger's client, idempotency, the HTTP plumbing, authentication.
  'src/ledger-client': ['ledger', 'src/domain-error', 'src/http', 'src/idempotency', 'src/kafka', 'src/log', 'src/runtime'],
  'src/idempotency': ['ledger', 'src/db', 'src/domain-error', 'src/guards', 'src/http', 'src/log', 'src/redaction', 'src/redis'],
  'src/http': ['ledger', 'src/auth', 'src/config', 'src/db', 'src/domain-error', 'src/guards', 'src/log', 'src/partners', 'src/redaction', 'src/transient'],
  'src/auth': ['src/config', 'src/db', 'src/domain-error', 'src/guards', 'src/log', 'src/redis', 'src/with-timeout'],
  'src/guards': ['ledger', 'src/domain-error', 'src/log', 'src/redis'],
  // A payment's request to its partner is built from the ledger's payment record.
  'src/partners': ['ledger', 'src/log', 'src/retry-after'],
  // The outbox, one folder: rounds written and marked, the ledger's rows, their encoding, a round
  // published after its commit, the sweeper and its claims, the messages set aside for an operator.
  'src/outbox': ['ledger', 'src/db', 'src/domain-error', 'src/kafka', 'src/log', 'src/runtime'],
  // The domain: it owns what it needs of Postgres (ledger/pg) and depends on nothing in src/.
  ledger: [],
  // The plumbing under everything.
  'src/runtime': ['src/config', 'src/db', 'src/kafka', 'src/log', 'src/redis', 'src/warm-up', 'src/with-timeout'],
  'src/warm-up': ['src/db', 'src/kafka', 'src/log'],
  // Dead letters are recorded in Postgres beside their topic, for the operator's routes.
  'src/kafka': ['src/config', 'src/db', 'src/domain-error', 'src/log', 'src/transient', 'src/with-timeout'],
  'src/db': ['src/domain-error', 'src/log'],
  // A process's secrets are settings that say when they were generated (src/secrets.ts).
  'src/config': ['src/secrets'], 'src/secrets': ['src/log'],
  // "Now" for the rules that depend on time: the wall's, or an account's test clock's. Every
  // folder of the server may import it (CLOCK_READERS): it is the one place that reads the wall.
  'src/clock': [],
  'src/countries': [], 'src/domain-error': [], 'src/event-stream': [], 'src/log': [], 'src/redaction': [], 'src/redis': [], 'src/retry-after': [], 'src/transient': [], 'src/vault': [], 'src/with-timeout': [],
};

/** The clients of /v1 (the browser dashboard, the CLI): they import nothing of the server, src/clock included; their time is their user's. */
const CLIENTS = ['src/dashboard', 'src/cli'];
/** Whether a folder may import src/clock: every folder of the server (the ledger has its own, ledger/clock.ts). */
const readsClock = (folder: string): boolean => folder !== 'ledger' && folder !== 'src/clock' && !CLIENTS.includes(folder);

/**
 * The files that read the wall's time themselves: the two clock modules. Everything else asks
 * them: now(accountId) for a rule that depends on time (an account may live on a test clock),
 * wallNow()/wallNowMs() for operational reads (timers, latencies, leases, logs), so a rule that
 * reads the wall behind an account's clock shows as a wallNow() to question, never a Date.now().
 */
const WALL_READERS = ['src/clock.ts', 'ledger/clock.ts'];

/** The modules of ledger/commands that are no command's: what a module is, the round's facts and needs, the table. */
const COMMANDS_SHARED = ['command', 'facts', 'needs', 'index'];
/** Kinds of command decided by a module named otherwise: a void and an expiry are one release (hold-release.ts). */
const MODULE_OF_KIND: Record<string, string> = { 'hold.void': 'hold-release', 'hold.expire': 'hold-release' };
/** The module file a kind of command lives in: its kind with '.' and '_' as '-' (transfer.partner_result: transfer-partner-result.ts). */
const moduleNameOf = (kind: string): string => MODULE_OF_KIND[kind] ?? kind.replace(/[._]/g, '-');
/**
 * What ledger/messages.ts may export: the envelopes on the ledger's topics and the partner
 * instructions (no ledger command owns them). A command's payload lives in its module.
 */
const MESSAGES_EXPORTED = ['LedgerCommandEnvelope', 'REPLY_TO_HEADER', 'LedgerReplyEnvelope', 'PartnerCommandEnvelope', 'TransferExecute', 'TransferReturn', 'PartnerInstruction',
  'partnerEnvelope', 'DomainEventEnvelope'];

/** The project modules a source file imports (relative imports, resolved to paths without .ts). */
function importsOf(file: string, text: string): string[] {
  return [...text.matchAll(/(?:from|import) '(\.[^']+)'/g)].map((m) => path.join(path.dirname(file), m[1]).replace(/\/index$/, ''));
}

function folderOf(module: string): string {
  const parts = module.split(path.sep);
  return parts[0] === 'ledger' ? 'ledger' : parts.slice(0, 2).join('/');
}

describe('house rules', () => {
  const code = ['src', 'ledger', 'consumers'].flatMap(sources);

  it('never turns an amount into a JS number', () => {
    const offenders = code.flatMap(({ file, text }) => text.split('\n').flatMap((line, i) =>
      /parseFloat|(?<![\w.])Number\([^)]*(amount|balance|total)|\b(amount|balance)\w*\.toNumber\(\)/i.test(line) ? [`${file}:${i + 1}: ${line.trim()}`] : []));
    assert.deepEqual(offenders, []);
  });

  it('reads the wall\'s time in the clock modules alone: no Date.now() or new Date() elsewhere in the server', () => {
    const offenders = code.filter(({ file }) => !WALL_READERS.includes(file) && !CLIENTS.includes(folderOf(file.replace(/\.tsx?$/, ''))))
      .flatMap(({ file, text }) => text.split('\n').flatMap((line, i) => (/Date\.now\(\)|new Date\(\s*\)/.test(line) ? [`${file}:${i + 1}: ${line.trim()}`] : [])));
    assert.deepEqual(offenders, []);
  });

  it('keeps ledger/ free of HTTP and Kafka', () => {
    const offenders = code.filter(({ file, text }) => file.startsWith('ledger') && /from '(koa|@koa\/router|kafkajs|ioredis)'/.test(text)).map((s) => s.file);
    assert.deepEqual(offenders, []);
  });

  it('imports across folders only what the map allows', () => {
    const offenders = code.flatMap(({ file, text }) => {
      const from = folderOf(file.replace(/\.tsx?$/, ''));
      if (!MAY_IMPORT[from]) return [`${file}: its folder ${from} is not in the map`];
      const allowed = readsClock(from) ? [...MAY_IMPORT[from], 'src/clock'] : MAY_IMPORT[from];
      return importsOf(file, text).map(folderOf).filter((to) => to !== from && !allowed.includes(to)).map((to) => `${file} imports ${to}`);
    });
    assert.deepEqual(offenders, []);
  });

  it('keeps src/http to the plumbing every surface shares: a dozen files at most, no route table', () => {
    const files = code.filter(({ file }) => file.startsWith(path.join('src', 'http') + path.sep));
    assert.ok(files.length <= 12, `src/http holds ${files.length} files`);
    assert.deepEqual(files.filter(({ file }) => /routes?\.ts$/.test(file) && !file.endsWith('route.ts')).map((f) => f.file), []);
  });

  it('never uses a route file as a library: no route file imports another (the API role lists them all)', () => {
    const isRoutes = (module: string) => /(^|[/-])routes$/.test(module) && !module.startsWith(path.join('src', 'roles'));
    const offenders = code.filter(({ file }) => isRoutes(file.replace(/\.tsx?$/, '')))
      .flatMap(({ file, text }) => importsOf(file, text).filter(isRoutes).map((to) => `${file} imports ${to}`));
    assert.deepEqual(offenders, []);
  });

  it('keeps the map itself free of circles: no two folders may import each other, however indirectly', () => {
    const reach = (from: string, seen = new Set<string>()): Set<string> => {
      for (const to of MAY_IMPORT[from] ?? []) if (!seen.has(to)) { seen.add(to); reach(to, seen); }
      return seen;
    };
    assert.deepEqual(Object.keys(MAY_IMPORT).filter((folder) => reach(folder).has(folder)), []);
  });

  it('has no import circles between modules', () => {
    const graph = new Map(code.map(({ file, text }) => [file.replace(/\.tsx?$/, ''), importsOf(file, text)]));
    const circles: string[] = [];
    const state = new Map<string, 'open' | 'done'>();
    const visit = (module: string, trail: string[]) => {
      if (state.get(module) === 'done') return;
      if (state.get(module) === 'open') { circles.push([...trail.slice(trail.indexOf(module)), module].join(' -> ')); return; }
      state.set(module, 'open');
      for (const next of graph.get(module) ?? []) visit(next, [...trail, module]);
      state.set(module, 'done');
    };
    for (const module of graph.keys()) visit(module, []);
    assert.deepEqual(circles, []);
  });

  it('keeps source files to a reviewable size', () => {
    const long = code.filter(({ text }) => text.split('\n').length > 400).map((s) => `${s.file}: ${s.text.split('\n').length} lines`);
    assert.deepEqual(long, []);
  });

  it("leaves the round to the ledger: the consumer's handler reads Kafka, calls the round, answers and publishes, in 120 lines", () => {
    const handler = code.find((s) => s.file === 'consumers/ledger/handler.ts');
    assert.ok(handler, 'consumers/ledger/handler.ts');
    assert.ok(handler.text.split('\n').length <= 120, `${handler.text.split('\n').length} lines`);
    assert.ok(!/from '\.\.\/\.\.\/ledger\/(round-transaction|balances|decide[^']*|alerts)'/.test(handler.text), 'no round built in the consumer');
    // The round reads its facts once, under its locks (ledger/store/round-transaction.ts gather): none read before.
    assert.ok(!/from '\.\.\/\.\.\/ledger\/store\//.test(handler.text), 'no facts read by the consumer');
  });

  it('keeps each command in its module with its row: every module of ledger/commands is in the table (index.ts)', () => {
    const index = code.find((s) => s.file === 'ledger/commands/index.ts');
    assert.ok(index, 'ledger/commands/index.ts');
    const rows = new Set(importsOf(index.file, index.text));
    const modules = code.filter(({ file }) => path.dirname(file) === 'ledger/commands').map(({ file }) => file.replace(/\.ts$/, ''));
    assert.deepEqual(modules.filter((m) => !COMMANDS_SHARED.includes(path.basename(m)) && !rows.has(m)), []);
  });

  it('finds each row of the table in the module named for its kind (hold.capture in hold-capture.ts), the listed exceptions aside', () => {
    const offenders = Object.entries(COMMANDS).flatMap(([kind, command]) => {
      const name = moduleNameOf(kind);
      const file = path.join('ledger', 'commands', `${name}.ts`);
      if (!fs.existsSync(path.join(ROOT, file))) return [`${kind}: no ${file}`];
      // The compiled module beside this test's: the row must be one of its exports, not a module's elsewhere.
      const exported = Object.values(require(path.join(__dirname, '..', '..', 'ledger', 'commands', name)) as Record<string, unknown>);
      return exported.includes(command) ? [] : [`${kind}: its row is not exported by ${file}`];
    });
    assert.deepEqual(offenders, []);
  });

  it('keeps ledger/messages.ts to what crosses Kafka as envelopes: no command payload, no import of a command', () => {
    const messages = code.find((s) => s.file === 'ledger/messages.ts');
    assert.ok(messages, 'ledger/messages.ts');
    const exported = [...messages.text.matchAll(/^export (?:interface|type|const|function) (\w+)/gm)].map((m) => m[1]);
    assert.deepEqual(exported.filter((name) => !MESSAGES_EXPORTED.includes(name)), []);
    assert.deepEqual(importsOf(messages.file, messages.text).filter((m) => m.startsWith(path.join('ledger', 'commands'))), []);
  });

  it("keeps the outbox in one folder: only src/outbox, and the round's own write (ledger/store/round-write.ts), touch its tables", () => {
    const touches = /\b(?:FROM|INTO|UPDATE|JOIN)\s+outbox_(?:rounds|set_aside)\b|\('outbox_(?:rounds|set_aside)'\)/;
    const offenders = code.filter(({ file, text }) => touches.test(text) && !file.startsWith('src/outbox/') && file !== 'ledger/store/round-write.ts').map(({ file }) => file);
    assert.deepEqual(offenders, []);
  });
});
