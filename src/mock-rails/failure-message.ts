// A sandbox control of the mock rails (server.ts, POST /<slug>/_control/failure-message): the next
// failures a scenario acts out on a submission answer with a message a test chose (any text:
// control characters, unpaired surrogates, 100 KB), so the service's screening of partner text
// (src/partners/screen.ts) can be seen at work. A real partner has nothing like it.
import { RailError } from './http';

/** The longest failure message the rails answer with, in characters. */
const FAILURE_MESSAGE_CHARS_MAX = 1_000_000;

export class FailureMessage {
  private pending = 0;
  private text = '';

  /** `count` from the query (default 1); the body's `message`, `repeat` times over (default 1). */
  set(countText: string | null, body: Record<string, unknown>): { pending: number; chars: number } {
    const count = Number.parseInt(countText ?? '1', 10);
    if (!Number.isSafeInteger(count) || count < 0 || count > 1000) throw new RailError(400, 'invalid_request', 'count must be an integer from 0 to 1000');
    const { message, repeat = 1 } = body;
    if (typeof message !== 'string' || message === '') throw new RailError(400, 'invalid_request', 'message must be a non-empty string');
    if (!Number.isSafeInteger(repeat) || (repeat as number) < 1 || message.length * (repeat as number) > FAILURE_MESSAGE_CHARS_MAX) {
      throw new RailError(400, 'invalid_request', `repeat must be a positive integer, and the message so repeated at most ${FAILURE_MESSAGE_CHARS_MAX} characters`);
    }
    this.pending = count;
    this.text = message.repeat(repeat as number);
    return { pending: count, chars: this.text.length };
  }

  /** A submission's failure as the partner answers it: a scenario's (422, 5xx) says the chosen message while some are pending. */
  answer(error: unknown): unknown {
    if (!(error instanceof RailError) || error.status < 422 || error.status === 429 || this.pending === 0) return error;
    this.pending -= 1;
    return new RailError(error.status, error.code, this.text, error.headers);
  }
}
