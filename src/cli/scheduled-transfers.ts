// payctl scheduled-transfers: a transfer to send at an instant, and again every day, week or month
// (README "Scheduled transfers"); each command one route of /v1/scheduled-transfers. A schedule
// paying bank details goes by the generic `payctl post /v1/scheduled-transfers -d transfer.recipient...`.
import type { Command } from 'commander';
import { UsageError } from './api';
import { callAndPrint } from './calls';
import { bodyOf, KEY_HELP, query, segment, type CommonOf } from './command-options';

interface CreateOptions {
  to: string; amount: string; currency: string; note?: string; fromWallet?: string;
  runAt: string; every?: string; count?: string; idempotencyKey?: string;
}

/** The repeat a create asks for: both of --every and --count, or neither (one run). */
function repeatOf(options: CreateOptions): { every: string; count: number } | undefined {
  if (options.every === undefined && options.count === undefined) return undefined;
  if (options.every === undefined || options.count === undefined) throw new UsageError('give --every and --count together (or neither, for one run)');
  if (!/^\d+$/.test(options.count)) throw new UsageError(`--count takes a whole number of runs, not "${options.count}"`);
  return { every: options.every, count: Number.parseInt(options.count, 10) };
}

export function addScheduledTransferCommands(cli: Command, common: CommonOf): void {
  const scheduled = cli.command('scheduled-transfers').description('scheduled transfers: sent at an instant, and again every day, week or month; each run one transfer');
  scheduled.command('create').description('schedule an internal transfer (the API checks it as POST /v1/transfers does)')
    .requiredOption('--to <email>', 'the recipient\'s email')
    .requiredOption('--amount <amount>', 'a decimal string, e.g. 10.00').requiredOption('--currency <currency>', 'e.g. USD')
    .requiredOption('--run-at <instant>', 'when the first run falls due: ISO 8601, in the future, at most a year ahead, e.g. 2027-01-31T09:00:00Z')
    .option('--every <step>', 'day, week or month (month: the same day of the month, a shorter month\'s last day)')
    .option('--count <n>', 'runs in all, the first included: 1 to 120 (with --every)')
    .option('--note <text>', 'the note of each transfer')
    .option('--from-wallet <wallet_id>', '"main" (the default) or one of your wallets: where each run takes the money from')
    .option('--idempotency-key <key>', KEY_HELP)
    .action(async (options: CreateOptions, command: Command) => {
      const transfer = bodyOf({ recipient_email: options.to, amount: options.amount, currency: options.currency, note: options.note, from_wallet_id: options.fromWallet });
      await callAndPrint('POST', '/v1/scheduled-transfers', {
        ...common(command), idempotencyKey: options.idempotencyKey, body: bodyOf({ transfer, run_at: options.runAt, repeat: repeatOf(options) }),
      });
    });
  scheduled.command('list').description('your scheduled transfers, newest first, each with its runs')
    .option('--status <status>', 'scheduled, completed or cancelled')
    .option('--limit <n>', 'at most this many').option('--before <cursor>', 'the page after this cursor')
    .action(async (options: { status?: string; limit?: string; before?: string }, command: Command) =>
      callAndPrint('GET', `/v1/scheduled-transfers${query(options)}`, common(command)));
  scheduled.command('get').description('one scheduled transfer: its next run, and each run\'s transfer or why it was refused').argument('<id>')
    .action(async (id: string, _options: unknown, command: Command) => callAndPrint('GET', `/v1/scheduled-transfers/${segment(id)}`, common(command)));
  scheduled.command('cancel').description('stop the runs still to come (409 scheduled_transfer_completed once every run has run)').argument('<id>')
    .option('--idempotency-key <key>', KEY_HELP)
    .action(async (id: string, options: { idempotencyKey?: string }, command: Command) =>
      callAndPrint('POST', `/v1/scheduled-transfers/${segment(id)}/cancel`, { ...common(command), idempotencyKey: options.idempotencyKey }));
}
