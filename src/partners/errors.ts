// The one error a partner call can raise. Its kind says what the caller may do next:
//   declined     the partner refused the payment (422); final, do not retry
//   unavailable  503 after every attempt, a network failure or a timeout; retry later
//                (maps to our 503 partner_unavailable, SPEC.md section 7)
//   rejected     any other 4xx: our request or our credentials are wrong; retrying will not help
//   unexpected   5xx other than 503, or an answer we cannot read; the payment may or may not
//                exist (maps to our 502 partner_error: check by reference before resubmitting)

export type PartnerErrorKind = 'declined' | 'unavailable' | 'rejected' | 'unexpected';

export interface PartnerErrorFields {
  kind: PartnerErrorKind;
  message: string;
  /** The partner's HTTP status, or null when no answer arrived (network failure, timeout). */
  httpStatus: number | null;
  /** The partner's `error` field ("declined", "invalid_token"...), or null. */
  partnerCode: string | null;
  /** The partner's own `message`, screened (screen.ts), or null when it gave none. */
  partnerMessage?: string | null;
  /** How long the partner asked us to wait (Retry-After), when it said so. */
  retryAfterMs?: number | null;
  cause?: unknown;
}

export class PartnerError extends Error {
  readonly kind: PartnerErrorKind;
  readonly httpStatus: number | null;
  readonly partnerCode: string | null;
  readonly partnerMessage: string | null;
  /** True only for `unavailable`: the same request may succeed later. */
  readonly retriable: boolean;
  readonly retryAfterMs: number | null;

  constructor(fields: PartnerErrorFields) {
    super(fields.message, fields.cause === undefined ? undefined : { cause: fields.cause });
    this.name = 'PartnerError';
    this.kind = fields.kind;
    this.httpStatus = fields.httpStatus;
    this.partnerCode = fields.partnerCode;
    this.partnerMessage = fields.partnerMessage ?? null;
    this.retriable = fields.kind === 'unavailable';
    this.retryAfterMs = fields.retryAfterMs ?? null;
  }
}

export function isPartnerError(error: unknown): error is PartnerError {
  return error instanceof PartnerError;
}

/** The kind of a partner answer that is not a success (see the table above). */
export function kindOfStatus(httpStatus: number): PartnerErrorKind {
  if (httpStatus === 422) return 'declined';
  if (httpStatus === 503) return 'unavailable';
  if (httpStatus >= 400 && httpStatus < 500) return 'rejected';
  return 'unexpected';
}
