// What every route of the mock rails is handed: the partner's rail (its profile, tokens, payment
// book and the sandbox controls' state) and the exchange being answered.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { FailureMessage } from './failure-message';
import type { TokenSpace } from './oauth';
import type { PartnerProfile } from './partners';
import type { PaymentBook } from './payments';

export interface PartnerRail {
  profile: PartnerProfile;
  tokens: TokenSpace;
  payments: PaymentBook;
  stats: { tokenRequests: number; submitAttempts: number; rejectedTokens: number };
  /** API calls still to refuse with a spurious "Invalid token" (the control route), and the share refused at random. */
  spurious: { pending: number; rate: number };
  /** The message scenario failures answer with instead of their own (the control route's). */
  failureMessage: FailureMessage;
  /**
   * A sandbox outage (the control routes): until `untilMs` every API call answers 503, at once,
   * or, when `hangs`, only once the outage is over, as a partner that stops answering does.
   */
  outage: { untilMs: number; hangs: boolean };
  /** How long a slow_answer submission waits before it answers. */
  slowAnswerMs: number;
}

export interface Exchange {
  rail: PartnerRail;
  req: IncomingMessage;
  res: ServerResponse;
  query: URLSearchParams;
  /** The `:id` segment of the route, when it has one. */
  id: string;
}

export interface Route {
  method: 'GET' | 'POST';
  /** Path below /<slug>, split on '/'; ':id' matches one segment. */
  segments: string[];
  handle(exchange: Exchange): Promise<void> | void;
}
