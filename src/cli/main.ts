// payctl: the sandbox from the terminal, a client of the public /v1 API alone. `payctl --help`
// lists the commands; each command's --help lists its options.
import { Command, Option } from 'commander';
import { ApiError, checkedBaseUrl, connect, request, requireToken, UsageError } from './api';
import { callAndPrint, type Common } from './calls';
import { DEFAULT_BASE_URL, loadProfile, saveProfile, type Profile } from './config';
import { listen } from './listen';
import { tailLogs } from './logs';
import { note, out, table } from './output';
import { ask } from './prompt';
import { addResourceCommands } from './resources';
import { describeTriggers, trigger, TRIGGER_TYPES } from './trigger';

/** Stops on Ctrl-C (or SIGTERM) by aborting what a following command is doing. */
function untilInterrupted(): AbortSignal {
  const aborter = new AbortController();
  for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => aborter.abort());
  return aborter.signal;
}

/** `-d a.b=c`: nested JSON fields; values stay strings (amounts are decimal strings), but true, false and null. */
function bodyOf(pairs: string[]): Record<string, unknown> | undefined {
  if (pairs.length === 0) return undefined;
  const body: Record<string, unknown> = {};
  for (const pair of pairs) {
    const equals = pair.indexOf('=');
    if (equals <= 0) throw new UsageError(`-d takes key=value, not "${pair}"`);
    const path = pair.slice(0, equals).split('.');
    const text = pair.slice(equals + 1);
    const value = text === 'true' ? true : text === 'false' ? false : text === 'null' ? null : text;
    let node = body;
    for (const key of path.slice(0, -1)) node = (node[key] ??= {}) as Record<string, unknown>;
    node[path[path.length - 1]] = value;
  }
  return body;
}

async function login(options: Common & { email?: string; password?: string; apiKey?: string; baseUrl?: string }): Promise<void> {
  const current = loadProfile(options.profile);
  const baseUrl = checkedBaseUrl(options.baseUrl ?? process.env.PAYCTL_BASE_URL ?? current?.baseUrl ?? DEFAULT_BASE_URL);
  const connection = { baseUrl, token: null, apiKey: null, session: null };
  let profile: Profile;
  if (options.apiKey) {
    // The key is checked before it is kept: an account it belongs to answers.
    const me = (await request(connection, 'GET', '/v1/accounts/me', { token: options.apiKey })).body as { email: string };
    profile = { baseUrl, apiKey: options.apiKey };
    note(`Logged in as ${me.email} with an API key.`);
  } else {
    // A password on the command line is visible to every user of the machine (ps, /proc).
    if (options.password !== undefined) {
      throw new UsageError('payctl does not take a password on the command line (anyone on this machine can read it there): type it when asked, or set PAYCTL_PASSWORD');
    }
    const fromEnv = process.env.PAYCTL_PASSWORD;
    if ((!options.email || !fromEnv) && !process.stdin.isTTY) throw new UsageError('give --api-key, or --email with PAYCTL_PASSWORD set (no terminal to ask)');
    const email = options.email ?? await ask('Email: ');
    const password = fromEnv || await ask('Password: ', true);
    const session = (await request(connection, 'POST', '/v1/auth/sessions', { token: null, body: { email, password } })).body as { token: string; expires_at: string };
    profile = { baseUrl, session: { token: session.token, expiresAt: session.expires_at, email } };
    note(`Logged in as ${email}; the session lasts until ${session.expires_at}.`);
  }
  const file = saveProfile(options.profile, profile);
  note(`Saved to ${file} (profile ${options.profile}).`);
}

export function program(): Command {
  const cli = new Command('payctl')
    .description('The payments sandbox from the terminal: forward events to a local server, trigger events, tail request logs, call the API.')
    .addOption(new Option('--profile <name>', 'which saved login to use').default('default'))
    .option('--json', 'print JSON instead of tables (for scripts)')
    .addHelpText('after', `\nEnvironment: PAYCTL_API_KEY and PAYCTL_BASE_URL override the profile's key and address; PAYCTL_PASSWORD is login's password.`
      + '\nThe base URL must be HTTPS, or plain HTTP to this machine.')
    .showHelpAfterError();
  const common = (command: Command): Common => command.optsWithGlobals() as Common;

  cli.command('login')
    .description('log in and save the credential (an API key, or the session an email and password buy) with the base URL')
    .option('--email <email>', 'your sandbox account\'s email (a session; needed for listen); the password is asked, or read from PAYCTL_PASSWORD (never saved)')
    // Refused with a message (login above), not offered: the password is asked, or read from PAYCTL_PASSWORD.
    .addOption(new Option('--password <password>').hideHelp())
    .option('--api-key <key>', 'an API key (sk_, rk_ or pk_) instead of a session')
    .option('--base-url <url>', `the service's address (default ${DEFAULT_BASE_URL})`)
    .action(async (options, command: Command) => login({ ...common(command), ...options }));

  cli.command('listen')
    .description('follow your account\'s events and POST each to a local URL, signed as a webhook delivery')
    .requiredOption('--forward-to <url>', 'where to POST each event, e.g. http://localhost:4242/webhooks')
    .option('--events <types>', 'comma-separated event types to forward (default: all)')
    .action(async (options: { forwardTo: string; events?: string }, command: Command) => {
      const events = options.events ? options.events.split(',').map((t) => t.trim()).filter(Boolean) : null;
      await listen(connect(common(command).profile), { forwardTo: options.forwardTo, events }, out, untilInterrupted());
    });

  cli.command('trigger')
    .description('make the sandbox emit an event, by doing what causes it')
    .argument('[event]', `one of: ${TRIGGER_TYPES.join(', ')}`)
    .option('--list', 'list the events it can trigger, and how')
    .action(async (event: string | undefined, options: { list?: boolean }, command: Command) => {
      const { profile, json } = common(command);
      if (options.list || !event) {
        out(json ? JSON.stringify(describeTriggers(), null, 2) : table(describeTriggers()));
        return;
      }
      if (!TRIGGER_TYPES.includes(event)) throw new UsageError(`cannot trigger "${event}"; payctl trigger --list says what it can`);
      const connection = connect(profile);
      requireToken(connection, profile);
      out(`Triggered ${event}: ${await trigger(connection, event)}`);
    });

  const logs = cli.command('logs').description('request logs');
  logs.command('tail')
    .description('print your account\'s requests as they happen')
    .option('--status <status>', 'a status class (4xx, 5xx) or one code (404)')
    .option('--path <prefix>', 'only paths starting with this, e.g. /v1/transfers')
    .action(async (options: { status?: string; path?: string }, command: Command) => {
      const { profile, json } = common(command);
      const connection = connect(profile);
      requireToken(connection, profile);
      note('Tailing request logs (Ctrl-C to stop)...');
      await tailLogs(connection, options, (log) => out(json ? JSON.stringify(log)
        : `${log.created_at.slice(11, 19)}  ${log.status}  ${log.method.padEnd(6)} ${log.path}  ${log.duration_ms} ms  ${log.error_code ?? ''}  ${log.id}`.trimEnd()), untilInterrupted());
    });

  for (const method of ['get', 'post', 'patch', 'delete'] as const) {
    cli.command(`${method} <path>`)
      .description(`${method.toUpperCase()} a path of the API, e.g. payctl ${method} /v1/${method === 'get' ? 'transfers?limit=5' : method === 'post' ? 'contacts -d name=Ada -d email=ada@example.com' : 'contacts/<id>'}`)
      .option('-d, --data <key=value>', 'a body field; a.b=c nests; repeat for more', (value: string, all: string[]) => [...all, value], [] as string[])
      .option('--idempotency-key <key>', 'the Idempotency-Key of a write (default: a new one, printed)')
      .option('--scenario <name>', 'a Sandbox-Scenario header (a failure asked for by name)')
      .action(async (path: string, options: { data: string[]; idempotencyKey?: string; scenario?: string }, command: Command) =>
        callAndPrint(method.toUpperCase(), path, { ...common(command), ...options, body: bodyOf(options.data) }));
  }
  addResourceCommands(cli, common);
  return cli;
}

/** Runs payctl; an API error prints its code and message and exits 1. */
export async function main(argv = process.argv): Promise<void> {
  try {
    await program().parseAsync(argv);
  } catch (error) {
    if (error instanceof ApiError) note(`Error ${error.status} ${error.code}: ${error.message}${error.details ? ` (${error.details})` : ''}`);
    else if (error instanceof UsageError) note(`Error: ${error.message}`);
    else note(`Error: ${(error as Error).stack ?? String(error)}`);
    process.exitCode = 1;
  }
}

if (require.main === module) void main();
