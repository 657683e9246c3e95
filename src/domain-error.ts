// Typed domain errors. Every failure a client can see is one of these codes (SPEC.md section 7);
// the HTTP layer maps them to the error body in one place (src/http/errors.ts).

export const ERROR_STATUS = {
  authentication_required: 401,
  invalid_api_key: 401,
  invalid_credentials: 401,
  token_expired: 401,
  invalid_token: 401,
  insufficient_scope: 403,
  publishable_key_write_denied: 403,
  dashboard_access_denied: 403,
  environment_mismatch: 403,
  account_not_active: 403,
  requires_action: 403,
  cross_account_access_denied: 403,
  resource_not_found: 404,
  payment_not_found: 404,
  transfer_not_found: 404,
  wallet_not_found: 404,
  hold_not_found: 404,
  scheduled_transfer_not_found: 404,
  test_clock_not_found: 404,
  quote_not_found: 404,
  reconciliation_not_found: 404,
  reconciliation_exception_not_found: 404,
  method_not_allowed: 405,
  idempotency_conflict: 409,
  quote_already_consumed: 409,
  resource_already_exists: 409,
  webhook_endpoint_disabled: 409,
  exception_already_resolved: 409,
  exception_resolving: 409,
  already_matched: 409,
  payment_state_conflict: 409,
  wallet_not_empty: 409,
  wallet_closed: 409,
  hold_not_active: 409,
  transfer_not_reversible: 409,
  scheduled_transfer_completed: 409,
  test_clock_advancing: 409,
  insufficient_funds: 422,
  hold_exceeded: 422,
  reversal_exceeded: 422,
  sender_no_chain_wallet: 422,
  account_no_chain_wallet: 422,
  faucet_limit_exceeded: 422,
  balance_alert_limit_exceeded: 422,
  recipient_not_found: 422,
  phantom_recipient: 422,
  quote_expired: 422,
  exception_pair_mismatch: 422,
  nothing_to_adjust: 422,
  message_unsendable: 422,
  external_send_blocked: 400,
  sandbox_scenario_not_allowed: 400,
  invalid_currency: 400,
  invalid_partner: 400,
  customer_not_linked: 400,
  unsupported_pair: 400,
  idempotency_key_missing: 400,
  invalid_request: 400,
  invalid_country_code: 400,
  invalid_key_type: 400,
  rate_limit_exceeded: 429,
  internal_error: 500,
  partner_error: 502,
  corridor_unavailable: 503,
  partner_unavailable: 503,
  service_unavailable: 503,
} as const;

export type ErrorCode = keyof typeof ERROR_STATUS;

/** The Retry-After of a 503 that names no other. */
const DEFAULT_RETRY_AFTER_SECONDS = '2';

export class DomainError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly details: string | null;
  /** True when repeating the same request later may succeed (5xx from a dependency). */
  readonly retriable: boolean;
  /** Extra response headers the error carries (Retry-After, Allow). */
  readonly headers: Record<string, string>;

  constructor(code: ErrorCode, message: string, details: string | null = null, headers: Record<string, string> = {}) {
    super(message);
    this.name = 'DomainError';
    this.code = code;
    this.status = ERROR_STATUS[code];
    this.details = details;
    this.retriable = this.status >= 500;
    // Every 503 says when to try again (SPEC.md section 7), whichever path raised it.
    this.headers = this.status === 503 && !('Retry-After' in headers) ? { ...headers, 'Retry-After': DEFAULT_RETRY_AFTER_SECONDS } : headers;
  }
}

export function isDomainError(error: unknown): error is DomainError {
  return error instanceof DomainError;
}

export interface ErrorBody {
  success: false;
  error: ErrorCode;
  message: string;
  details: string | null;
}

export function errorBody(error: DomainError): ErrorBody {
  return { success: false, error: error.code, message: error.message, details: error.details };
}
