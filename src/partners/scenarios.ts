// Sandbox failure scenarios (SPEC.md section 1: in the sandbox, USD, EUR and GBP payments always
// succeed). A client that wants to see a failure asks for one by name, with the Sandbox-Scenario
// header on the request that moves money; the name travels with the instruction to the partner,
// and the mock rails act it out. Without one, nothing fails on purpose.
export const SANDBOX_SCENARIOS = [
  'outage', 'unavailable', 'lost_answer', 'slow_answer', 'decline', 'error', 'reverse',
  'statement_missing', 'statement_duplicate', 'statement_fee', 'statement_late', 'statement_batched',
] as const;
export type SandboxScenario = (typeof SANDBOX_SCENARIOS)[number];

/**
 * The scenarios that leave the payment alone and make the partner's settlement statement
 * disagree with it instead (src/mock-rails/statements.ts), so that each category of a
 * reconciliation report can be produced on purpose.
 */
export const STATEMENT_SCENARIOS = ['statement_missing', 'statement_duplicate', 'statement_fee', 'statement_late', 'statement_batched'] as const;
export type StatementScenario = (typeof STATEMENT_SCENARIOS)[number];

export function isStatementScenario(value: unknown): value is StatementScenario {
  return typeof value === 'string' && (STATEMENT_SCENARIOS as readonly string[]).includes(value);
}

/** The fee the partner takes from a payment in the statement_fee scenario, in whole units of its currency. */
export const STATEMENT_FEE = '0.50';
/** Days the partner's value date lags the settlement in the statement_late scenario. */
export const STATEMENT_LATE_DAYS = 3;

export const SANDBOX_SCENARIO_HEADER = 'Sandbox-Scenario';

/** What each scenario makes the partner do, and what becomes of the transfer or payment that asked for it (README, OpenAPI). */
export const SCENARIO_EFFECTS: Record<SandboxScenario, string> = {
  outage: 'the rail answers 503 to the first two submissions, then accepts: retried with backoff, then completed',
  unavailable: 'the rail answers 503 to every submission of the request: a payment is 202 pending, nothing paid yet, and the service\'s own resubmission (without the scenario) goes through',
  lost_answer: 'the rail creates the payment but its answer is lost (500): resubmitted under the same reference, found, completed, paid once',
  slow_answer: 'the rail creates the payment but answers each submission only after 3 s. A transfer: past the partner dispatcher\'s 2 s timeout, so it asks the rail for the payment under its reference and finds it: completed, paid once, never failed. A payment (add-funds, send): within the API\'s 5 s timeout, so it is only a slow success: 201 after about 3 s with the payment as the partner made it, retry_count 0, settled as any other',
  decline: 'the rail declines (422): failed (partner_declined), hold released',
  error: 'the rail fails with 500 and no payment: failed (partner_error) after the checks, hold released',
  reverse: 'the rail accepts, then reverses the payment: rolled_back (partner_reversed), hold released',
  statement_missing: 'the payment settles normally, but the partner\'s settlement statement leaves its line out: a reconciliation reports it ledger_only',
  statement_duplicate: 'the payment settles normally, but the statement lists its line twice: the second line is reported statement_only',
  statement_fee: `the payment settles normally, but the partner takes a fee of ${STATEMENT_FEE}: reported mismatched on fee`,
  statement_late: `the payment settles normally, but the statement gives a value date ${STATEMENT_LATE_DAYS} days late: reported mismatched on value_date`,
  statement_batched: 'the payment settles normally, and the statement settles it in one batch line with the other such payments of its day, currency and direction: matched one-to-many',
};

export function isSandboxScenario(value: unknown): value is SandboxScenario {
  return typeof value === 'string' && (SANDBOX_SCENARIOS as readonly string[]).includes(value);
}
