// The sandbox controls of the mock rails (`/<slug>/_control/...`, listed in server.ts): they let
// tests and the simulation force token renewal, count round trips, hear a failure message of
// their choosing and take a partner down. A real partner has nothing like them.
import { setTimeout as sleep } from 'node:timers/promises';
import { RailError, readJsonObject, sendJson } from './http';
import type { Exchange, PartnerRail } from './rail';
import { wallNowMs } from '../clock';

/** The longest outage the control route makes. */
const OUTAGE_MS_MAX = 60 * 60 * 1000;

export async function expireClaim({ rail, res, id }: Exchange): Promise<void> {
  if (!rail.profile.issuesClaimLink) throw new RailError(404, 'not_found', 'no such route');
  sendJson(res, 200, await rail.payments.expireClaim(id));
}

export async function cancelPayment({ rail, res, id }: Exchange): Promise<void> {
  sendJson(res, 200, await rail.payments.cancel(id));
}

export async function settlePayment({ rail, res, id }: Exchange): Promise<void> {
  sendJson(res, 200, await rail.payments.settle(id));
}

export async function expireTokens({ rail, res }: Exchange): Promise<void> {
  sendJson(res, 200, { expired: await rail.tokens.expireAccessTokens() });
}

export function refuseNextTokens({ rail, res, query }: Exchange): void {
  const count = Number.parseInt(query.get('count') ?? '1', 10);
  if (!Number.isSafeInteger(count) || count < 0 || count > 1000) throw new RailError(400, 'invalid_request', 'count must be an integer from 0 to 1000');
  rail.spurious.pending = count;
  sendJson(res, 200, { pending: count });
}

export async function setFailureMessage({ rail, req, res, query }: Exchange): Promise<void> {
  sendJson(res, 200, rail.failureMessage.set(query.get('count'), await readJsonObject(req)));
}

/** Down for `seconds`: the API hangs, as a partner's does in an outage, and answers 503 when it is over. */
export function goDown({ rail, res, query }: Exchange): void {
  const seconds = Number(query.get('seconds') ?? '0');
  if (!Number.isFinite(seconds) || seconds < 0 || seconds > 300) throw new RailError(400, 'invalid_request', 'seconds must be a number from 0 to 300');
  rail.outage = { untilMs: wallNowMs() + seconds * 1000, hangs: true };
  sendJson(res, 200, { down_until: new Date(rail.outage.untilMs).toISOString() });
}

/** An outage of `ms` during which every API call is answered 503 at once. */
export function startOutage({ rail, res, query }: Exchange): void {
  const ms = Number.parseInt(query.get('ms') ?? '', 10);
  if (!Number.isSafeInteger(ms) || ms < 0 || ms > OUTAGE_MS_MAX) throw new RailError(400, 'invalid_request', `ms must be an integer from 0 to ${OUTAGE_MS_MAX}`);
  rail.outage = { untilMs: wallNowMs() + ms, hangs: false };
  sendJson(res, 200, { down_until: new Date(rail.outage.untilMs).toISOString() });
}

/** A call to a partner that is down is refused: at once, or once a hanging outage is over (ended early by `seconds=0`). */
export async function waitOutOutage(rail: PartnerRail): Promise<void> {
  if (rail.outage.untilMs <= wallNowMs()) return;
  while (rail.outage.hangs && rail.outage.untilMs > wallNowMs()) await sleep(Math.min(100, rail.outage.untilMs - wallNowMs()));
  throw new RailError(503, 'temporarily_unavailable', 'the partner is down (sandbox control)');
}

export function readStats({ rail, res }: Exchange): void {
  const { tokenRequests, submitAttempts, rejectedTokens } = rail.stats;
  sendJson(res, 200, { token_requests: tokenRequests, submit_attempts: submitAttempts, rejected_tokens: rejectedTokens });
}
