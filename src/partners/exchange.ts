// One HTTP exchange with a partner: bounded in time from its send, in one of the partner's slots
// for calls at once (call-limit.ts), which learns from it whether the partner answered in time.
// The answer is the parsed JSON of a 2xx, else a PartnerError carrying the partner's own code and
// message, screened, and its Retry-After.
import { parseRetryAfterMs } from '../retry-after';
import type { AdaptiveCallLimit } from './call-limit';
import { kindOfStatus, PartnerError } from './errors';
import { isRecord, unexpectedAnswer } from './answers';
import { screenedCode, screenedTextOrNull } from './screen';

export async function exchange(calls: AdaptiveCallLimit, timeoutMs: number, what: string, url: string, init: RequestInit): Promise<unknown> {
  let response: Response;
  let text: string;
  // The timeout runs from the send: a call waiting for a slot is not yet the partner's.
  const slot = await calls.acquire();
  try {
    response = await fetch(url, { ...init, signal: AbortSignal.timeout(timeoutMs) });
    text = await response.text();
    slot.release(false);
  } catch (error) {
    const timedOut = error instanceof Error && (error.name === 'TimeoutError' || error.name === 'AbortError');
    slot.release(timedOut);
    throw new PartnerError({
      kind: 'unavailable', httpStatus: null, partnerCode: null, cause: error,
      message: `${what}: ${timedOut ? `no answer within ${timeoutMs} ms` : `network failure (${(error as Error).message})`}`,
    });
  }
  let payload: unknown = null;
  try {
    payload = text === '' ? null : JSON.parse(text);
  } catch {
    if (response.ok) throw unexpectedAnswer(what, 'the partner answered with a body that is not JSON');
  }
  if (response.ok) return payload;
  // The partner's code and message go into our errors, and from there into ledger commands.
  const partnerCode = isRecord(payload) ? screenedCode(payload.error) : null;
  const partnerMessage = isRecord(payload) ? screenedTextOrNull(payload.message) : null;
  throw new PartnerError({
    kind: kindOfStatus(response.status),
    message: `${what}: partner answered ${response.status} ${partnerCode ?? 'without a usable error code'}${partnerMessage === null ? '' : `: ${partnerMessage}`}`,
    httpStatus: response.status,
    partnerCode,
    partnerMessage,
    retryAfterMs: parseRetryAfterMs(response.headers.get('retry-after')),
  });
}
