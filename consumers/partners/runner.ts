// Runs the partner dispatcher as a member of the `partners` consumer group on partner.commands.
import type { PartnerCommandEnvelope } from '../../ledger/messages';
import { startConsumer } from '../../src/kafka/consumer';
import { TOPICS } from '../../src/kafka/topics';
import { partnerAccess } from '../../src/partner-links/access';
import type { RunningRole, Runtime } from '../../src/runtime';
import { ExecutingDeadline } from './deadline';
import { PaymentSettler } from './settler';
import { Reconciliations } from '../../src/reconciliation/reports';
import { ReconciliationSchedule } from '../../src/reconciliation/schedule';
import {
  BATCH_MS_MAX_DEFAULT, CONCURRENCY_MAX_DEFAULT, createPartnerClients, handlePartnerBatch, POLL_MS_MAX_DEFAULT, REQUEUE_PAUSE_MS_DEFAULT,
  type PartnerCallBounds, type PartnerDispatcherDeps,
} from './dispatcher';

/**
 * Partitions handled at once by one dispatcher process. Partner calls wait on the network (and a
 * pending payment is polled for up to pollMsMax), so batches of several partitions overlap.
 */
export const PARTITIONS_CONSUMED_CONCURRENTLY_DEFAULT = 4;

/**
 * The settler's partner calls: its next poll is its retry, so a call is tried twice at most and
 * a partner that does not answer holds a poll for seconds, not the request path's 5 x 5 s.
 */
const SETTLER_CALLS = { timeoutMs: 3_000, attemptsMax: 2, backoffMsMax: 500 };

export interface PartnerDispatcherOptions {
  /** Where the partners live; defaults to config.mockRailsUrl. */
  railsUrl?: string;
  pollMsMax?: number;
  concurrencyMax?: number;
  batchMsMax?: number;
  partitionsConsumedConcurrently?: number;
  requeuePauseMs?: number;
  /** The bounds of each partner call; PARTNER_CALL_BOUNDS by default. */
  partnerCalls?: PartnerCallBounds;
  /** An executing transfer's deadline; defaults to config.transferExecutingDeadlineMs. */
  executingDeadlineMs?: number;
}

export async function startPartnerDispatcher(runtime: Runtime, options: PartnerDispatcherOptions = {}): Promise<RunningRole> {
  const { config } = runtime;
  const deps: PartnerDispatcherDeps = {
    db: runtime.db,
    producer: runtime.producer,
    codec: runtime.codec,
    names: runtime.names,
    clients: createPartnerClients({
      railsUrl: options.railsUrl ?? config.mockRailsUrl,
      clientId: config.partnerClientId,
      clientSecret: config.partnerClientSecret,
      calls: options.partnerCalls,
    }),
    pollMsMax: options.pollMsMax ?? POLL_MS_MAX_DEFAULT,
    concurrencyMax: options.concurrencyMax ?? CONCURRENCY_MAX_DEFAULT,
    batchMsMax: options.batchMsMax ?? BATCH_MS_MAX_DEFAULT,
    requeuePauseMs: options.requeuePauseMs ?? REQUEUE_PAUSE_MS_DEFAULT,
  };
  const consumer = await startConsumer<PartnerCommandEnvelope>(runtime, {
    groupId: `${runtime.names.prefix}partners`,
    // A batch may spend BATCH_MS_MAX_DEFAULT on partner calls between heartbeats.
    sessionTimeoutMs: 30_000,
    topic: TOPICS.partnerCommands,
    partitionsConsumedConcurrently: options.partitionsConsumedConcurrently ?? PARTITIONS_CONSUMED_CONCURRENTLY_DEFAULT,
    handleBatch: (messages) => handlePartnerBatch(deps, messages),
  });
  // The partner-link callback is the API's; the settler only reads and refreshes links.
  const access = partnerAccess(config, runtime.db, options.railsUrl ?? config.mockRailsUrl, () => config.publicUrl ?? '');
  const settling = partnerAccess(config, runtime.db, options.railsUrl ?? config.mockRailsUrl, () => config.publicUrl ?? '', SETTLER_CALLS);
  const settler = new PaymentSettler(runtime, settling.links, settling.clients, {
    intervalMs: config.paymentSettleIntervalMs, resubmitAfterMs: config.paymentResubmitAfterMs, pendingDeadlineMs: config.paymentPendingDeadlineMs,
  });
  settler.start();
  const deadline = new ExecutingDeadline(runtime, deps.clients, {
    deadlineMs: options.executingDeadlineMs ?? config.transferExecutingDeadlineMs, intervalMs: config.transferDeadlineCheckMs,
  });
  deadline.start();
  const schedule = config.reconciliationCheckMs > 0
    ? new ReconciliationSchedule(runtime, new Reconciliations(runtime, access.clients), config.reconciliationCheckMs) : null;
  schedule?.start();
  return {
    role: 'partners',
    stop: async () => {
      await schedule?.stop();
      await settler.stop();
      await deadline.stop();
      await consumer.disconnect();
    },
  };
}
