// A partner's sandbox controls (src/mock-rails/controls.ts), as this service uses them to tell a
// partner of a move the partner did not make itself: a client's simulation of a payment's next
// state (src/payments/simulation.ts), a test clock's advance past a claim link's expiry
// (consumers/partners/clock-payments.ts). The partner stays the authority: it refuses (409) a
// move on a payment that has ended there otherwise (the payee claimed it), and the caller then
// records what the partner says, never its own move.

export type SandboxControl = 'settle' | 'cancel' | 'expire-claim';

/** What the partner did: the move, a refusal (the payment is not where the move applies), or no answer. */
export type ControlAnswer = 'done' | 'refused' | 'unreachable';

/** A control call waits this long at most: a partner that hangs is one that could not be told. */
const CONTROL_TIMEOUT_MS = 10_000;

/** Tells `partner` to `control` its payment `externalId` (its own id), with the rails' control secret. */
export async function tellPartnerControl(railsUrl: string, controlSecret: string, partner: string, control: SandboxControl, externalId: string): Promise<ControlAnswer> {
  const answer = await fetch(`${railsUrl}/${partner}/_control/${control}/${encodeURIComponent(externalId)}`, {
    method: 'POST', headers: { authorization: `Bearer ${controlSecret}` }, signal: AbortSignal.timeout(CONTROL_TIMEOUT_MS),
  }).catch(() => null);
  if (answer?.ok) return 'done';
  if (answer?.status === 409) return 'refused';
  return 'unreachable';
}
