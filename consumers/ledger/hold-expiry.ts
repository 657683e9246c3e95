// The ledger releases expired holds by itself (DESIGN.md section 5g): a sweep finds active holds
// past their expires_at and sends each a `hold.expire` command on ledger.commands, keyed by its
// account like every command, so the expiry is decided in the ledger's rounds beside the captures
// and voids that may race it, against the locked hold. The command's id is derived from the hold
// (`hold.expire:<hold id>`): however many sweeps, processes or restarts send it, the ledger
// decides it once (processed_commands), and a hold that is no longer active is left as it is.
// The sweep runs at the start too, so a hold that expired while no ledger process ran is released
// as soon as one is back.
import type { LedgerCommandEnvelope } from '../../ledger/messages';
import { log } from '../../src/log';
import { sendBatches } from '../../src/kafka/send-batches';
import { TOPICS } from '../../src/kafka/topics';
import type { Runtime } from '../../src/runtime';

const SWEEP_EVERY_MS = 1_000;
/** Holds sent per sweep: the rest wait for the next one. */
const HOLDS_PER_SWEEP_MAX = 500;

export const holdExpiryCommandId = (holdId: string): string => `hold.expire:${holdId}`;

/** Sends the expiry command of every due hold (at most HOLDS_PER_SWEEP_MAX); returns how many. */
export async function sweepExpiredHoldsOnce(runtime: Runtime, now = new Date()): Promise<number> {
  const due: Array<{ id: string; account_id: string }> = await runtime.db('holds').where('status', 'active').andWhere('expires_at', '<=', now)
    .orderBy('expires_at').limit(HOLDS_PER_SWEEP_MAX).select('id', 'account_id');
  if (due.length === 0) return 0;
  const messages = await Promise.all(due.map(async (hold) => {
    const envelope: LedgerCommandEnvelope = {
      id: holdExpiryCommandId(hold.id), type: 'hold.expire', account_id: hold.account_id, reply_to: null, issued_at: now.toISOString(),
      payload: JSON.stringify({ hold_id: hold.id }), idempotency_key: null, fingerprint: null, request_id: null,
    };
    return { key: hold.account_id, value: await runtime.codec.encode(TOPICS.ledgerCommands, envelope) };
  }));
  await sendBatches(runtime.producer, [{ topic: runtime.names.full(TOPICS.ledgerCommands), messages }]);
  return due.length;
}

export function startHoldExpiry(runtime: Runtime, everyMs = SWEEP_EVERY_MS): { stop(): Promise<void> } {
  let running: Promise<unknown> | null = null;
  const sweep = () => {
    // One sweep at a time; a hold sent and not yet decided is sent again by the next, and decided once.
    running ??= sweepExpiredHoldsOnce(runtime)
      .catch((error) => log.error({ err: error }, 'hold expiry sweep failed; the next sweep tries again'))
      .finally(() => { running = null; });
  };
  sweep();
  const timer = setInterval(sweep, everyMs);
  return { stop: async () => { clearInterval(timer); await running; } };
}
