// The guards every API request passes (DESIGN.md section 5): who calls, how often, whether it
// was asked before, and the request's log.
import { Authenticator } from '../auth/authenticate';
import { KeyCache } from '../auth/key-cache';
import { SessionRevocations } from '../auth/session-revocations';
import { RateLimiter } from '../guards/rate-limit';
import type { Guards } from '../http/app';
import { LedgerAnswerCache } from '../idempotency/answer-cache';
import { IdempotencyGuard } from '../idempotency/guard';
import type { RequestLogRecorder } from '../request-logs/recorder';
import type { Runtime } from '../runtime';
import { sessionTokens } from './session-tokens';

const IDEMPOTENCY_WAIT_MS_MAX = 10_000;

/** The guards, and the rate limiter behind two of them (the API warms it before it listens). */
export function apiGuards(runtime: Runtime, recorder: RequestLogRecorder): { guards: Guards; limiter: RateLimiter } {
  const { config } = runtime;
  const authenticator = new Authenticator(runtime.db, config, sessionTokens(runtime), new KeyCache(runtime.redis), new SessionRevocations(runtime.db, runtime.redis));
  const limiter = new RateLimiter(runtime.redis, config.rateLimitRps, config.rateLimitBurst, { ratePerSecond: config.attemptRateLimitRps, burst: config.attemptRateLimitBurst });
  const guards: Guards = {
    authenticationReads: authenticator.reads,
    authenticate: authenticator.authenticate,
    rateLimit: limiter.limit,
    credentialAttempt: limiter.attempt,
    idempotent: new IdempotencyGuard(runtime.db, runtime.redis, IDEMPOTENCY_WAIT_MS_MAX).run,
    ledgerAnswers: new LedgerAnswerCache(runtime.redis),
    recordRequest: recorder.record,
  };
  return { guards, limiter };
}
