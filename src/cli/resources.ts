// payctl's commands for transfers (their lists and reversals; scheduled ones in scheduled-transfers.ts),
// wallets, holds, transfer batches and balance alerts: each a route of /v1 with its fields as options
// (metadata as --metadata key=value, repeated: on a create, and as a list's filter), printed as
// `payctl get|post|patch|delete` print (calls.ts). What they do not cover (a capture to bank details,
// a batch item's every field, a PATCH of metadata) those generic commands send as it is.
import fs from 'node:fs';
import type { Command } from 'commander';
import { UsageError } from './api';
import { callAndPrint, printedCall } from './calls';
import { bodyOf, collect, KEY_HELP, query, segment, type CommonOf } from './command-options';
import { note } from './output';
import { addScheduledTransferCommands } from './scheduled-transfers';

const WALLET = '"main" (the main balance) or a wallet id';
const FROM = 'created at or after: a date (YYYY-MM-DD, from its 00:00 UTC) or an ISO 8601 instant';
const TO = 'created before: a date (YYYY-MM-DD, that UTC day included) or an ISO 8601 instant (excluded)';

const METADATA_HELP = 'a metadata entry key=value (the value may hold "="); repeat for more';
const METADATA_FILTER_HELP = 'only those whose metadata has key=value exactly; repeat: all must hold';

/** `--metadata key=value`, repeated: an object's metadata (string values); the first "=" ends the key. */
function metadataOf(pairs: string[]): Record<string, string> | undefined {
  if (pairs.length === 0) return undefined;
  return Object.fromEntries(pairs.map((pair) => {
    const equals = pair.indexOf('=');
    if (equals <= 0) throw new UsageError(`--metadata takes key=value, not "${pair}"`);
    return [pair.slice(0, equals), pair.slice(equals + 1)];
  }));
}

/** `--metadata key=value` of a list: the filter metadata[key]=value, each pair a parameter. */
function metadataQuery(pairs: string[]): Record<string, string> {
  return Object.fromEntries(Object.entries(metadataOf(pairs) ?? {}).map(([key, value]) => [`metadata[${key}]`, value]));
}

function addWalletCommands(cli: Command, common: CommonOf): void {
  const wallets = cli.command('wallets').description('wallets: named pockets of your account, with balances of their own (README "Wallets and holds")');
  wallets.command('list').description('your wallets, newest first (closed ones too)')
    .option('--limit <n>', 'at most this many').option('--before <cursor>', 'the page after this cursor (the next_cursor of the last page)')
    .action(async (options: { limit?: string; before?: string }, command: Command) => callAndPrint('GET', `/v1/wallets${query(options)}`, common(command)));
  wallets.command('create').description('a new wallet, empty')
    .requiredOption('--name <name>', 'what to call it')
    .option('--metadata <key=value>', METADATA_HELP, collect, [] as string[])
    .option('--idempotency-key <key>', KEY_HELP)
    .action(async (options: { name: string; metadata: string[]; idempotencyKey?: string }, command: Command) =>
      callAndPrint('POST', '/v1/wallets', { ...common(command), idempotencyKey: options.idempotencyKey, body: bodyOf({ name: options.name, metadata: metadataOf(options.metadata) }) }));
  wallets.command('get').description('one wallet').argument('<wallet_id>')
    .action(async (walletId: string, _options: unknown, command: Command) => callAndPrint('GET', `/v1/wallets/${segment(walletId)}`, common(command)));
  wallets.command('balances').description('available, held and pending per currency').argument('<wallet_id>', WALLET)
    .action(async (walletId: string, _options: unknown, command: Command) => callAndPrint('GET', `/v1/wallets/${segment(walletId)}/balances`, common(command)));
  wallets.command('entries').description('the postings on its balances, newest first').argument('<wallet_id>', WALLET)
    .option('--order <order>', 'asc: oldest first').option('--limit <n>', 'at most this many').option('--before <cursor>', 'the page after this cursor')
    .action(async (walletId: string, options: { order?: string; limit?: string; before?: string }, command: Command) =>
      callAndPrint('GET', `/v1/wallets/${segment(walletId)}/ledger-entries${query(options)}`, common(command)));
  wallets.command('move').description('move money between the main balance and your wallets, or to another account\'s wallet by its id')
    .requiredOption('--from <wallet_id>', WALLET).requiredOption('--to <wallet_id>', WALLET)
    .requiredOption('--amount <amount>', 'a decimal string, e.g. 30.00').requiredOption('--currency <currency>', 'e.g. USD')
    .option('--description <text>', 'a note kept with it')
    .option('--idempotency-key <key>', KEY_HELP)
    .action(async (options: { from: string; to: string; amount: string; currency: string; description?: string; idempotencyKey?: string }, command: Command) =>
      callAndPrint('POST', '/v1/wallet-transfers', {
        ...common(command), idempotencyKey: options.idempotencyKey,
        body: bodyOf({ from_wallet_id: options.from, to_wallet_id: options.to, amount: options.amount, currency: options.currency, description: options.description }),
      }));
  wallets.command('close').description('close an empty wallet (409 wallet_not_empty while money or a hold is left in it)').argument('<wallet_id>')
    .option('--idempotency-key <key>', KEY_HELP)
    .action(async (walletId: string, options: { idempotencyKey?: string }, command: Command) =>
      callAndPrint('POST', `/v1/wallets/${segment(walletId)}/close`, { ...common(command), idempotencyKey: options.idempotencyKey }));
}

function addHoldCommands(cli: Command, common: CommonOf): void {
  const holds = cli.command('holds').description('holds: authorize an amount now, raise it, capture it for recipients or void it later (README "Wallets and holds")');
  holds.command('list').description('your holds, newest first')
    .option('--status <status>', 'active, captured, voided or expired').option('--wallet <wallet_id>', WALLET)
    .option('--from <date|instant>', FROM).option('--to <date|instant>', TO).option('--currency <currency>', 'holds in this currency')
    .option('--metadata <key=value>', METADATA_FILTER_HELP, collect, [] as string[])
    .option('--limit <n>', 'at most this many').option('--before <cursor>', 'the page after this cursor')
    .action(async (options: { status?: string; wallet?: string; from?: string; to?: string; currency?: string; metadata: string[]; limit?: string; before?: string }, command: Command) =>
      callAndPrint('GET', `/v1/holds${query({
        status: options.status, wallet_id: options.wallet, from: options.from, to: options.to, currency: options.currency, ...metadataQuery(options.metadata),
        limit: options.limit, before: options.before,
      })}`, common(command)));
  holds.command('create').description('take an amount out of available until it is captured, voided or expires')
    .requiredOption('--amount <amount>', 'a decimal string, e.g. 20.00').requiredOption('--currency <currency>', 'e.g. USD')
    .option('--wallet <wallet_id>', `${WALLET} (default main)`)
    .option('--expires-at <instant>', 'when the ledger releases it by itself, ISO 8601 (default: in 7 days; at most 30)')
    .option('--description <text>', 'a note kept with it')
    .option('--metadata <key=value>', METADATA_HELP, collect, [] as string[])
    .option('--idempotency-key <key>', KEY_HELP)
    .action(async (options: { amount: string; currency: string; wallet?: string; expiresAt?: string; description?: string; metadata: string[]; idempotencyKey?: string }, command: Command) =>
      callAndPrint('POST', '/v1/holds', {
        ...common(command), idempotencyKey: options.idempotencyKey,
        body: bodyOf({
          amount: options.amount, currency: options.currency, wallet_id: options.wallet, expires_at: options.expiresAt, description: options.description, metadata: metadataOf(options.metadata),
        }),
      }));
  holds.command('get').description('one hold, with its captures').argument('<hold_id>')
    .action(async (holdId: string, _options: unknown, command: Command) => callAndPrint('GET', `/v1/holds/${segment(holdId)}`, common(command)));
  holds.command('capture').description('pay part or all of what is left of a hold to an account of the sandbox, as an internal transfer')
    .argument('<hold_id>')
    .requiredOption('--amount <amount>', 'at most what is left of the hold')
    .requiredOption('--to <email>', 'the recipient\'s email (to bank details: payctl post /v1/holds/<id>/capture -d recipient.bank.account_number=...)')
    .option('--final', 'release what is left after this capture')
    .option('--note <text>', 'a note on the transfer')
    .option('--idempotency-key <key>', KEY_HELP)
    .action(async (holdId: string, options: { amount: string; to: string; final?: boolean; note?: string; idempotencyKey?: string }, command: Command) =>
      callAndPrint('POST', `/v1/holds/${segment(holdId)}/capture`, {
        ...common(command), idempotencyKey: options.idempotencyKey,
        body: bodyOf({ amount: options.amount, recipient_email: options.to, final: options.final, note: options.note }),
      }));
  holds.command('increment').description('raise an active hold by an amount, taken from the available balance it holds from')
    .argument('<hold_id>')
    .requiredOption('--amount <amount>', 'added to the hold, in its currency, e.g. 5.00')
    .option('--idempotency-key <key>', KEY_HELP)
    .action(async (holdId: string, options: { amount: string; idempotencyKey?: string }, command: Command) =>
      callAndPrint('POST', `/v1/holds/${segment(holdId)}/increment`, { ...common(command), idempotencyKey: options.idempotencyKey, body: bodyOf({ amount: options.amount }) }));
  holds.command('void').description('release all that is left of an active hold').argument('<hold_id>')
    .option('--idempotency-key <key>', KEY_HELP)
    .action(async (holdId: string, options: { idempotencyKey?: string }, command: Command) =>
      callAndPrint('POST', `/v1/holds/${segment(holdId)}/void`, { ...common(command), idempotencyKey: options.idempotencyKey }));
}

/** `email:amount:currency`: one internal transfer of a batch. */
function payOf(text: string): Record<string, string> {
  const parts = text.split(':');
  if (parts.length !== 3 || parts.some((p) => p === '')) throw new UsageError(`--pay takes email:amount:currency, e.g. friend@example.com:10.00:USD, not "${text}"`);
  const [recipientEmail, amount, currency] = parts;
  return { recipient_email: recipientEmail, amount, currency };
}

/** The transfers of a JSON file ("-": stdin): an array of POST /v1/transfers bodies, or a batch body's `transfers`. */
function transfersOfFile(file: string): unknown[] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(fs.readFileSync(file === '-' ? 0 : file, 'utf8'));
  } catch (error) {
    throw new UsageError(`cannot read the transfers of ${file === '-' ? 'stdin' : file}: ${(error as Error).message}`);
  }
  const transfers = Array.isArray(parsed) ? parsed : (parsed as { transfers?: unknown } | null)?.transfers;
  if (!Array.isArray(transfers)) throw new UsageError(`${file} holds neither an array of transfers nor an object with "transfers"`);
  return transfers;
}

function addBatchCommands(cli: Command, common: CommonOf): void {
  const batches = cli.command('batches').description('transfer batches: up to 1,000 transfers in one request, all or none (--atomic) or each alone');
  batches.command('create').description('send a batch of transfers; the answer lists each item\'s outcome')
    .option('--pay <email:amount:currency>', 'an internal transfer, e.g. friend@example.com:10.00:USD; repeat for more', collect, [] as string[])
    .option('--file <path>', 'a JSON array of POST /v1/transfers bodies (or {"transfers": [...]}), "-" for stdin; its transfers come before --pay\'s')
    .option('--atomic', 'every transfer or none (default: each decided alone)')
    .option('--idempotency-key <key>', KEY_HELP)
    .action(async (options: { pay: string[]; file?: string; atomic?: boolean; idempotencyKey?: string }, command: Command) => {
      const transfers = [...(options.file === undefined ? [] : transfersOfFile(options.file)), ...options.pay.map(payOf)];
      if (transfers.length === 0) throw new UsageError('give the batch\'s transfers: --pay email:amount:currency (repeated), or --file');
      await callAndPrint('POST', '/v1/transfer-batches', { ...common(command), idempotencyKey: options.idempotencyKey, body: { atomic: options.atomic ?? false, transfers } });
    });
  batches.command('get').description('one batch, with each item\'s outcome (the API lists no batches: keep the id create prints)').argument('<batch_id>')
    .action(async (batchId: string, _options: unknown, command: Command) => callAndPrint('GET', `/v1/transfer-batches/${segment(batchId)}`, common(command)));
}

function addAlertCommands(cli: Command, common: CommonOf): void {
  const alerts = cli.command('alerts').description('balance alerts: a balance.threshold_crossed event when an available balance crosses a threshold');
  alerts.command('list').description('your balance alerts, newest first')
    .option('--limit <n>', 'at most this many').option('--before <cursor>', 'the page after this cursor')
    .action(async (options: { limit?: string; before?: string }, command: Command) => callAndPrint('GET', `/v1/balance-alerts${query(options)}`, common(command)));
  alerts.command('create').description('watch one available balance: exactly one of --below or --above')
    .requiredOption('--currency <currency>', 'e.g. USD')
    .option('--below <amount>', 'fires when available goes from at or over this to under it')
    .option('--above <amount>', 'fires when available goes from at or under this to over it')
    .option('--wallet <wallet_id>', `${WALLET} (default main)`)
    .option('--idempotency-key <key>', KEY_HELP)
    .action(async (options: { currency: string; below?: string; above?: string; wallet?: string; idempotencyKey?: string }, command: Command) => {
      if ((options.below === undefined) === (options.above === undefined)) throw new UsageError('give exactly one of --below or --above');
      await callAndPrint('POST', '/v1/balance-alerts', {
        ...common(command), idempotencyKey: options.idempotencyKey,
        body: bodyOf({ currency: options.currency, below: options.below, above: options.above, wallet_id: options.wallet }),
      });
    });
  alerts.command('get').description('one balance alert').argument('<alert_id>')
    .action(async (alertId: string, _options: unknown, command: Command) => callAndPrint('GET', `/v1/balance-alerts/${segment(alertId)}`, common(command)));
  alerts.command('delete').description('stop watching').argument('<alert_id>')
    .option('--idempotency-key <key>', KEY_HELP)
    .action(async (alertId: string, options: { idempotencyKey?: string }, command: Command) =>
      callAndPrint('DELETE', `/v1/balance-alerts/${segment(alertId)}`, { ...common(command), idempotencyKey: options.idempotencyKey }));
}

function addTransferCommands(cli: Command, common: CommonOf): void {
  const transfers = cli.command('transfers').description('transfers: find them again, and reverse one (send one: payctl post /v1/transfers)');
  transfers.command('list').description('your transfers, newest first')
    .option('--status <status>', 'pending, quoting, executing, completed, failed or rolled_back')
    .option('--from <when>', FROM).option('--to <when>', TO).option('--currency <currency>', 'e.g. USD')
    .option('--recipient-email <email>', 'sent to this email')
    .option('--metadata <key=value>', METADATA_FILTER_HELP, collect, [] as string[])
    .option('--limit <n>', 'at most this many').option('--before <cursor>', 'the page after this cursor')
    .action(async (options: { status?: string; from?: string; to?: string; currency?: string; recipientEmail?: string; metadata: string[]; limit?: string; before?: string }, command: Command) => {
      const { recipientEmail, metadata, ...rest } = options;
      await callAndPrint('GET', `/v1/transfers${query({ ...rest, recipient_email: recipientEmail, ...metadataQuery(metadata) })}`, common(command));
    });
  transfers.command('get').description('one transfer, with its status history').argument('<transfer_id>')
    .action(async (transferId: string, _options: unknown, command: Command) => callAndPrint('GET', `/v1/transfers/${segment(transferId)}`, common(command)));
  transfers.command('reverse').description('give back part or all of a completed transfer: at once between two accounts of the sandbox, as a return the partner makes for a bank or chain transfer')
    .argument('<transfer_id>')
    .option('--amount <amount>', 'at most what is left to reverse (default: all of it)')
    .option('--reason <text>', 'why, kept with the reversal')
    .option('--metadata <key=value>', METADATA_HELP, collect, [] as string[])
    .option('--scenario <name>', 'a Sandbox-Scenario for the partner to act out on a return (e.g. decline)')
    .option('--idempotency-key <key>', KEY_HELP)
    .action(async (transferId: string, options: { amount?: string; reason?: string; metadata: string[]; scenario?: string; idempotencyKey?: string }, command: Command) => {
      const reversal = await printedCall('POST', `/v1/transfers/${segment(transferId)}/reversals`, {
        ...common(command), idempotencyKey: options.idempotencyKey, scenario: options.scenario,
        body: bodyOf({ amount: options.amount, reason: options.reason, metadata: metadataOf(options.metadata) }),
      }) as { status?: string; payout?: unknown } | null;
      // A return waits on the partner: say how to see how it ends (a late answer of the ledger, a 202, names no payout).
      if (reversal?.status === 'pending' && reversal.payout) note(`pending: the partner is asked to return it; payctl transfers reversals ${transferId} shows when it completes or fails`);
    });
  transfers.command('reversals').description('the reversals of a transfer, oldest first').argument('<transfer_id>')
    .action(async (transferId: string, _options: unknown, command: Command) => callAndPrint('GET', `/v1/transfers/${segment(transferId)}/reversals`, common(command)));
}

/** Adds the resource commands to payctl; `common` reads a command's global options (--profile, --json). */
export function addResourceCommands(cli: Command, common: CommonOf): void {
  addTransferCommands(cli, common);
  addScheduledTransferCommands(cli, common);
  addWalletCommands(cli, common);
  addHoldCommands(cli, common);
  addBatchCommands(cli, common);
  addAlertCommands(cli, common);
}
