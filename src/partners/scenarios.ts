// Sandbox failure scenarios (SPEC.md section 1: in the sandbox, USD, EUR and GBP payments always
// succeed). A client that wants to see a failure asks for one by name, with the Sandbox-Scenario
// header on the request that moves money; the name travels with the instruction to the partner,
// and the mock rails act it out. Without one, nothing fails on purpose.
export const SANDBOX_SCENARIOS = ['outage', 'unavailable', 'lost_answer', 'decline', 'error', 'reverse'] as const;
export type SandboxScenario = (typeof SANDBOX_SCENARIOS)[number];

export const SANDBOX_SCENARIO_HEADER = 'Sandbox-Scenario';

/** What each scenario makes the partner do, and what becomes of the transfer (README, OpenAPI). */
export const SCENARIO_EFFECTS: Record<SandboxScenario, string> = {
  outage: 'the rail answers 503 to the first two submissions, then accepts: retried with backoff, then completed',
  unavailable: 'the rail answers 503 to every submission of the request: a payment is 503 partner_unavailable, nothing paid, and a later resubmission (without the scenario) goes through',
  lost_answer: 'the rail creates the payment but its answer is lost (500): resubmitted under the same reference, found, completed, paid once',
  decline: 'the rail declines (422): failed (partner_declined), hold released',
  error: 'the rail fails with 500 and no payment: failed (partner_error) after the checks, hold released',
  reverse: 'the rail accepts, then reverses the payment: rolled_back (partner_reversed), hold released',
};

export function isSandboxScenario(value: unknown): value is SandboxScenario {
  return typeof value === 'string' && (SANDBOX_SCENARIOS as readonly string[]).includes(value);
}
