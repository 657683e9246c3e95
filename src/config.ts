// Settings of one process, read once from the environment (DESIGN.md section 5a).
// Every setting has a default that works for the embedded start on one machine, except the
// secrets: a process listening beyond loopback refuses to start without its own (secrets.ts).
import { isLoopback, resolveSecrets } from './secrets';

export type Environment = 'sandbox' | 'live';

// Every role this codebase can run; `ROLES=all` (the default) runs them all in one process.
export const ALL_ROLES = ['api', 'ledger', 'partners', 'notifier', 'webhooks', 'request-logs', 'mock-rails'] as const;
export type Role = (typeof ALL_ROLES)[number];

/**
 * How long a request waits for Kafka to acknowledge its command by default
 * (LEDGER_COMMAND_SEND_DEADLINE_MS). The producer itself retries for about 50 s, far past what a
 * client waits for; past this the request answers 503. A command still queued behind the batch in
 * flight is then never sent; one in that batch may still land once Kafka returns (a send cannot be called back), so that 503 says the outcome is unknown, as
 * any 5xx is (SPEC.md section 7): the client repeats with the same Idempotency-Key, which names
 * the same command, and learns the one decision the ledger made.
 */
const LEDGER_COMMAND_SEND_DEADLINE_MS_DEFAULT = 5_000;

export interface Config {
  port: number;
  host: string;
  environment: Environment;
  masterKey: string;
  jwtSecret: string;
  sessionTtlSeconds: number;
  databaseUrl: string;
  redisUrl: string;
  redisKeyPrefix: string;
  kafkaBrokers: string[];
  kafkaTopicPrefix: string;
  kafkaPartitions: number;
  schemaRegistryUrl: string;
  rateLimitRps: number;
  rateLimitBurst: number;
  /** Credential attempts (sign-in, sign-up, a refused credential) per client address and per account named. */
  attemptRateLimitRps: number;
  attemptRateLimitBurst: number;
  /** Wrong passwords for one email before sign-in for it is locked, then the first lockout (doubling) and the longest. */
  signInFreeFailures: number;
  signInLockoutMs: number;
  signInLockoutMsMax: number;
  /** The scrypt cost (N) of new password hashes; a stored hash keeps the cost it was made with. */
  passwordHashCost: number;
  roles: Role[];
  mockRailsPort: number;
  /** Where partner dispatchers reach the rails; each partner lives under /<slug>. */
  mockRailsUrl: string;
  partnerClientId: string;
  partnerClientSecret: string;
  /** The credential of the mock rails' sandbox controls (`/<slug>/_control/...`). */
  mockRailsControlSecret: string;
  /** Seals the partner tokens of customer links at rest (src/vault.ts). */
  partnerTokenSecret: string;
  /** Seals webhook signing secrets at rest (src/vault.ts). */
  webhookSecretKey: string;
  /** How the outside world (a partner's redirect, a person's browser) reaches the API; unset: where it listens. */
  publicUrl: string | null;
  partnerTokenTtlSeconds: number;
  /** Simulated confirmation time of the chain and pull rails. */
  chainConfirmMs: number;
  /** How often the settler follows open payments at their partners. */
  paymentSettleIntervalMs: number;
  /** A payment still pending without a partner reference after this long is failed. */
  paymentPendingDeadlineMs: number;
  /** How long a pending payment is left to the request that submits it before the settler resubmits it. */
  paymentResubmitAfterMs: number;
  /** An executing transfer with no instruction claimed this long is checked with its partner (consumers/partners/deadline.ts). */
  transferExecutingDeadlineMs: number;
  transferDeadlineCheckMs: number;
  /** How long a mock claim link can be claimed before the payment expires. */
  mockRailsClaimTtlMs: number;
  /** Of every 1000 API calls, how many the mock rails refuse with a spurious "Invalid token". */
  mockRailsInvalidTokenPerMille: number;
  /**
   * Whether webhook endpoints may point to private, loopback and other non-public addresses:
   * `refuse` always in live; in the sandbox `allow` on loopback unless WEBHOOK_PRIVATE_ADDRESSES=refuse,
   * so a receiver on the developer's machine (and the tests' receivers on 127.0.0.1) get events, and
   * `refuse` beyond loopback unless it says `allow`: a sandbox anyone can reach (the Docker setup)
   * must not let anyone who signs up probe the network it runs in.
   */
  webhookPrivateAddresses: WebhookPrivateAddresses;
  /** How long a webhook receiver has to answer an attempt (DESIGN.md section 5d: 10 s). */
  webhookTimeoutMs: number;
  /** The waits between a delivery's attempts (DESIGN.md section 5d); tests shorten them. */
  webhookRetryScheduleMs: number[];
  /** An endpoint answering only failures for this long is disabled (3 days). */
  webhookDisableAfterMs: number;
  /** How often the webhook dispatcher looks for deliveries that fell due. */
  webhookPollMs: number;
  /**
   * How long the notifier's and the webhook dispatcher's fetches of domain.events wait to gather
   * 64 KiB of events (an event waits at most this long; fewer, larger fetches under load). 0: a
   * fetch returns with the first event, and an idle fetch waits 500 ms (the tests' services).
   */
  eventFetchWaitMs: number;
  /** How often the partners role checks for a previous day not yet reconciled; 0: no schedule. */
  reconciliationCheckMs: number;
  sseHeartbeatMs: number;
  /** How long /readyz answers from its last checks (it is public: no caller makes it check more often). */
  readinessCacheMs: number;
  bodyLimitBytes: number;
  ledgerReplyTimeoutMs: number;
  /** How long a POST waits for Kafka to take its command before it answers 503 (its outcome unknown). */
  ledgerCommandSendDeadlineMs: number;
  /** How often the api role removes expired idempotency records (0: never). */
  idempotencySweepMs: number;
  /** How long an FX quote holds its rate (SPEC.md section 8: 30 s); tests shorten it. */
  fxQuoteLifetimeMs: number;
  /** How often the due-runs worker of scheduled transfers looks for due occurrences and decided runs. */
  scheduledRunsSweepMs: number;
  /** A scheduled run the ledger has not decided this long after its transfer was sent is sent again (the same command); each later wait is twice the one before. */
  scheduledRunResendAfterMs: number;
  /** The length of a scheduled transfer's `day` step (a `week` is seven): a day, shortened by a sandbox's tests. */
  scheduledTransferDayMs: number;
  logLevel: string;
}

function integer(env: NodeJS.ProcessEnv, name: string, fallback: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (!/^\d+$/.test(raw)) throw new Error(`setting ${name} must be a non-negative integer, got "${raw}"`);
  return Number.parseInt(raw, 10);
}

/** A rate per second, whole or a fraction ('0.01': one every 100 s). */
function ratePerSecond(env: NodeJS.ProcessEnv, name: string, fallback: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (!/^\d+(\.\d+)?$/.test(raw)) throw new Error(`setting ${name} must be a non-negative number, got "${raw}"`);
  return Number(raw);
}

/**
 * A payment still pending this long after it was recorded is the settler's to submit: the
 * request's own retries are done by then. From then on a request repeated with its key submits
 * nothing, so that once the settler has found no payment under the reference past its deadline,
 * nothing can make one while it fails it. PAYMENT_RESUBMIT_AFTER_MS sets it (tests shorten it).
 */
const PAYMENT_RESUBMIT_AFTER_MS_DEFAULT = 10_000;

const PASSWORD_HASH_COST_DEFAULT = 16_384;

const DAY_MS = 86_400_000;

/**
 * SCHEDULED_TRANSFER_DAY_MS: how long a scheduled transfer's `day` step lasts. Tests shorten it to
 * watch a daily schedule run several times in seconds; a live server's day is a day.
 */
function scheduledTransferDayMs(env: NodeJS.ProcessEnv, environment: Environment): number {
  const dayMs = integer(env, 'SCHEDULED_TRANSFER_DAY_MS', DAY_MS);
  if (dayMs < 1) throw new Error('setting SCHEDULED_TRANSFER_DAY_MS must be at least 1');
  if (environment === 'live' && dayMs !== DAY_MS) throw new Error(`setting SCHEDULED_TRANSFER_DAY_MS other than ${DAY_MS} is for sandboxes only`);
  return dayMs;
}

/**
 * PASSWORD_HASH_COST, scrypt's N: a power of two from 1024 (a sandbox that signs up hundreds of
 * test accounts) to 1048576; a live server never goes below the default.
 */
function passwordHashCost(env: NodeJS.ProcessEnv, environment: Environment): number {
  const cost = integer(env, 'PASSWORD_HASH_COST', PASSWORD_HASH_COST_DEFAULT);
  if (cost < 1024 || cost > 1_048_576 || (cost & (cost - 1)) !== 0) throw new Error(`setting PASSWORD_HASH_COST must be a power of two from 1024 to 1048576, got ${cost}`);
  if (environment === 'live' && cost < PASSWORD_HASH_COST_DEFAULT) throw new Error(`setting PASSWORD_HASH_COST below ${PASSWORD_HASH_COST_DEFAULT} is for sandboxes only`);
  return cost;
}

function durations(env: NodeJS.ProcessEnv, name: string, fallback: number[]): number[] {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (!/^\d+(,\d+)*$/.test(raw)) throw new Error(`setting ${name} must be a comma-separated list of milliseconds, got "${raw}"`);
  return raw.split(',').map(Number);
}

function text(env: NodeJS.ProcessEnv, name: string, fallback: string): string {
  const raw = env[name];
  return raw === undefined || raw === '' ? fallback : raw;
}

function parseRoles(raw: string): Role[] {
  if (raw === 'all') return [...ALL_ROLES];
  const roles = raw.split(',').map((r) => r.trim()).filter(Boolean);
  for (const role of roles) {
    if (!(ALL_ROLES as readonly string[]).includes(role)) {
      throw new Error(`unknown role "${role}" in ROLES; known roles: ${ALL_ROLES.join(', ')}, or "all"`);
    }
  }
  return roles as Role[];
}

export type WebhookPrivateAddresses = 'allow' | 'refuse';

function webhookPrivateAddresses(env: NodeJS.ProcessEnv, environment: Environment, host: string): WebhookPrivateAddresses {
  const setting = text(env, 'WEBHOOK_PRIVATE_ADDRESSES', environment === 'live' || !isLoopback(host) ? 'refuse' : 'allow');
  if (setting !== 'allow' && setting !== 'refuse') throw new Error(`setting WEBHOOK_PRIVATE_ADDRESSES must be "allow" or "refuse", got "${setting}"`);
  if (environment === 'live' && setting === 'allow') throw new Error('setting WEBHOOK_PRIVATE_ADDRESSES=allow is for sandboxes only: a live server never sends webhooks to private addresses');
  return setting;
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const environment = text(env, 'ENVIRONMENT', 'sandbox');
  if (environment !== 'sandbox' && environment !== 'live') {
    throw new Error(`setting ENVIRONMENT must be "sandbox" or "live", got "${environment}"`);
  }
  const host = text(env, 'HOST', '127.0.0.1');
  const roles = parseRoles(text(env, 'ROLES', 'all'));
  const secrets = resolveSecrets(env, { host, environment, roles });
  const mockRailsPort = integer(env, 'MOCK_RAILS_PORT', 4000);
  return {
    port: integer(env, 'PORT', 3000),
    host,
    environment,
    masterKey: secrets.MASTER_KEY,
    jwtSecret: secrets.JWT_SECRET,
    sessionTtlSeconds: integer(env, 'SESSION_TTL_SECONDS', 3600),
    databaseUrl: text(env, 'DATABASE_URL', 'postgres://payments:payments@127.0.0.1:5432/payments'),
    redisUrl: text(env, 'REDIS_URL', 'redis://127.0.0.1:6379'),
    redisKeyPrefix: text(env, 'REDIS_KEY_PREFIX', 'pay:'),
    kafkaBrokers: text(env, 'KAFKA_BROKERS', '127.0.0.1:9092').split(',').map((b) => b.trim()),
    kafkaTopicPrefix: text(env, 'KAFKA_TOPIC_PREFIX', ''),
    kafkaPartitions: integer(env, 'KAFKA_PARTITIONS', 12),
    schemaRegistryUrl: text(env, 'SCHEMA_REGISTRY_URL', 'http://127.0.0.1:8081/apis/ccompat/v7'),
    rateLimitRps: integer(env, 'RATE_LIMIT_RPS', 100),
    rateLimitBurst: integer(env, 'RATE_LIMIT_BURST', 200),
    attemptRateLimitRps: ratePerSecond(env, 'ATTEMPT_RATE_LIMIT_RPS', 1),
    attemptRateLimitBurst: integer(env, 'ATTEMPT_RATE_LIMIT_BURST', 20),
    signInFreeFailures: integer(env, 'SIGN_IN_FREE_FAILURES', 5),
    signInLockoutMs: integer(env, 'SIGN_IN_LOCKOUT_MS', 1_000),
    signInLockoutMsMax: integer(env, 'SIGN_IN_LOCKOUT_MS_MAX', 15 * 60_000),
    passwordHashCost: passwordHashCost(env, environment),
    roles,
    mockRailsPort,
    mockRailsUrl: text(env, 'MOCK_RAILS_URL', `http://127.0.0.1:${mockRailsPort}`),
    partnerClientId: text(env, 'PARTNER_CLIENT_ID', 'sandbox-orchestrator'),
    partnerClientSecret: secrets.PARTNER_CLIENT_SECRET,
    mockRailsControlSecret: secrets.MOCK_RAILS_CONTROL_SECRET,
    partnerTokenSecret: secrets.PARTNER_TOKEN_SECRET,
    webhookSecretKey: secrets.WEBHOOK_SECRET_KEY,
    publicUrl: env.PUBLIC_URL ? env.PUBLIC_URL.replace(/\/+$/, '') : null,
    partnerTokenTtlSeconds: integer(env, 'PARTNER_TOKEN_TTL_SECONDS', 3600),
    chainConfirmMs: integer(env, 'CHAIN_CONFIRM_MS', 150),
    mockRailsInvalidTokenPerMille: integer(env, 'MOCK_RAILS_INVALID_TOKEN_PER_MILLE', 10),
    mockRailsClaimTtlMs: integer(env, 'MOCK_RAILS_CLAIM_TTL_MS', 24 * 60 * 60 * 1000),
    paymentSettleIntervalMs: integer(env, 'PAYMENT_SETTLE_INTERVAL_MS', 500),
    paymentPendingDeadlineMs: integer(env, 'PAYMENT_PENDING_DEADLINE_MS', 60_000),
    paymentResubmitAfterMs: integer(env, 'PAYMENT_RESUBMIT_AFTER_MS', PAYMENT_RESUBMIT_AFTER_MS_DEFAULT),
    transferExecutingDeadlineMs: integer(env, 'TRANSFER_EXECUTING_DEADLINE_MS', 300_000),
    transferDeadlineCheckMs: integer(env, 'TRANSFER_DEADLINE_CHECK_MS', 10_000),
    webhookPrivateAddresses: webhookPrivateAddresses(env, environment, host),
    webhookTimeoutMs: integer(env, 'WEBHOOK_TIMEOUT_MS', 10_000),
    // 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h: eight attempts over about 28 hours.
    webhookRetryScheduleMs: durations(env, 'WEBHOOK_RETRY_SCHEDULE_MS', [5_000, 300_000, 1_800_000, 7_200_000, 18_000_000, 36_000_000, 36_000_000]),
    webhookDisableAfterMs: integer(env, 'WEBHOOK_DISABLE_AFTER_MS', 3 * 24 * 3_600_000),
    webhookPollMs: integer(env, 'WEBHOOK_POLL_MS', 500),
    eventFetchWaitMs: integer(env, 'EVENT_FETCH_WAIT_MS', 50),
    reconciliationCheckMs: integer(env, 'RECONCILIATION_CHECK_MS', 600_000),
    sseHeartbeatMs: integer(env, 'SSE_HEARTBEAT_MS', 15_000),
    readinessCacheMs: integer(env, 'READINESS_CACHE_MS', 2_000),
    bodyLimitBytes: integer(env, 'BODY_LIMIT_BYTES', 64 * 1024),
    ledgerReplyTimeoutMs: integer(env, 'LEDGER_REPLY_TIMEOUT_MS', 2000),
    ledgerCommandSendDeadlineMs: integer(env, 'LEDGER_COMMAND_SEND_DEADLINE_MS', LEDGER_COMMAND_SEND_DEADLINE_MS_DEFAULT),
    idempotencySweepMs: integer(env, 'IDEMPOTENCY_SWEEP_MS', 600_000),
    fxQuoteLifetimeMs: integer(env, 'FX_QUOTE_LIFETIME_MS', 30_000),
    scheduledRunsSweepMs: Math.max(1, integer(env, 'SCHEDULED_RUNS_SWEEP_MS', 1_000)),
    scheduledRunResendAfterMs: integer(env, 'SCHEDULED_RUN_RESEND_AFTER_MS', 10_000),
    scheduledTransferDayMs: scheduledTransferDayMs(env, environment),
    logLevel: text(env, 'LOG_LEVEL', 'info'),
  };
}
