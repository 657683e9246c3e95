// One API call as payctl's commands make it: the profile's credential, an Idempotency-Key on
// every write (a new one, printed, unless given, so a write repeated after a lost answer can name
// it), and the answer printed as a table for people or JSON for scripts.
import { randomUUID } from 'node:crypto';
import { connect, request, requireToken } from './api';
import { human, note, out } from './output';

/** How long a write waits, in all, for a decision the service has not made yet (a 202 with Retry-After). */
const DECISION_WAIT_S_MAX = 30;

/** The options every command has (payctl's global ones). */
export interface Common { profile: string; json?: boolean }

export interface CallOptions extends Common {
  body?: Record<string, unknown>;
  idempotencyKey?: string;
  /** A Sandbox-Scenario header: a failure asked for by name. */
  scenario?: string;
}

export async function callAndPrint(method: string, path: string, options: CallOptions): Promise<void> {
  await printedCall(method, path, options);
}

/** The call of callAndPrint, its answer's body returned for a command that says more about it. */
export async function printedCall(method: string, path: string, options: CallOptions): Promise<unknown> {
  const connection = connect(options.profile);
  const headers: Record<string, string> = {};
  if (method !== 'GET') {
    headers['idempotency-key'] = options.idempotencyKey ?? randomUUID();
    if (!options.idempotencyKey) note(`Idempotency-Key: ${headers['idempotency-key']}`);
  }
  if (options.scenario) headers['sandbox-scenario'] = options.scenario;
  const send = () => request(connection, method, path, { token: requireToken(connection, options.profile), body: options.body, headers });
  let answer = await send();
  // A 202 with Retry-After is a decision not made yet (the ledger was slow to answer): repeated
  // under the same key, as SPEC.md section 7 tells a client, until it is made or the wait runs out.
  for (let waited = 0; answer.status === 202 && answer.headers.has('retry-after') && waited < DECISION_WAIT_S_MAX;) {
    const seconds = Math.max(1, Number(answer.headers.get('retry-after')) || 1);
    note(`not decided yet; asking again in ${seconds} s under the same Idempotency-Key`);
    await new Promise((resolve) => setTimeout(resolve, seconds * 1000));
    waited += seconds;
    answer = await send();
  }
  out(options.json ? JSON.stringify(answer.body, null, 2) : human(answer.body));
  return answer.body;
}
