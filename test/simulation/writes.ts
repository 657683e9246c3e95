// The writes every client sends, as SPEC.md section 7 tells a client to send them (and as some
// clients misbehave on purpose), each final answer taught to the model once, and the checks an
// answer of a money-moving write must pass against the model. Shared by clients.ts and the
// wallet and hold operations (wallet-ops.ts).
import { Money, type Amount } from '../../ledger/money';
import type { IdForm } from './ids';
import type { Answer } from './http';
import type { Command, Delta } from './model';
import type { Misbehaviour } from './plan';
import type { Member, World } from './world';

export const money = (cents: number): string => `${Math.floor(cents / 100)}.${String(cents % 100).padStart(2, '0')}`;
export const delta = (account: string, currency: string, amount: Amount | string): Delta => ({ account, currency, amount: new Money(amount) });
export const SHORT_TIMEOUT_MS = 40;
/** An upper bound of what one unit buys in another fiat currency (GBP to USD is about 1.27). */
export const MAX_RATE = new Money('1.4');

/** The same outcome: a replay answers 200 with what the first answer said (or the same refusal). */
export function sameOutcome(first: Answer, again: Answer, idField: (body: any) => unknown): boolean {
  const created = (s: number) => s === 200 || s === 201;
  if (created(first.status)) return created(again.status) && idField(first.body) === idField(again.body);
  return again.status === first.status && again.body?.error === first.body?.error;
}

export interface Write {
  member: Member;
  label: string;
  path: string;
  /** No body for a route that takes none (a hold's void). */
  body: Record<string, unknown> | undefined;
  /** Another body for the same key (the misbehaviour "other_body"). */
  otherBody: Record<string, unknown> | undefined;
  headers?: Record<string, string>;
  possible: Delta[];
  allowedFinal?: string[];
  idField: (body: any) => unknown;
  /** Told of each command the write begins, before it is sent (a hold's capture or void is undecided from then on). */
  onBegin?: (command: Command, key: string) => void;
  /** What the model learns from a final answer. */
  learn: (command: Command, answer: Answer) => void;
  /**
   * Set for a route whose key's record the API keeps (README "Idempotency"; routes that move no
   * money): a refusal is not kept, so another body under a refused key is a request of its own,
   * taught to the model by this, with that body's expectations. Unset: the key keeps every final
   * answer (the ledger's routes), and another body is 409 idempotency_conflict.
   */
  learnOtherAsNew?: (command: Command, answer: Answer) => void;
}

/** Sends a write as the client's misbehaviour for it says, and teaches the model each final answer. */
export async function write(world: World, w: Write, misbehave: Misbehaviour): Promise<Answer | null> {
  const { http, model, findings } = world;
  const client = w.member.index;
  const options = { token: w.member.key, headers: w.headers ?? {} };
  const learnOnce = (command: Command) => {
    let learned: Answer | null = null;
    return (answer: Answer) => {
      if (learned) {
        findings.expect(sameOutcome(learned, answer, w.idField), 'every client that retried learned one outcome',
          () => `${w.label}: first ${learned!.status} ${JSON.stringify(learned!.body).slice(0, 200)}, then ${answer.status} ${JSON.stringify(answer.body).slice(0, 200)}`, [client]);
        return;
      }
      learned = answer;
      findings.trace(client, `  <- ${answer.status} ${answer.body?.error ?? ''} ${String(w.idField(answer.body) ?? '')} (${w.label.slice(0, 40)})`);
      w.learn(command, answer);
    };
  };
  let key = w.member.keys.uuid();
  let command = model.begin(client, w.label, w.possible, w.allowedFinal);
  w.onBegin?.(command, key);
  let learn = learnOnce(command);
  findings.trace(client, `${w.label} key=${key.slice(0, 8)}${misbehave ? ` (${misbehave})` : ''}`);

  if (misbehave === 'new_key_after_timeout') {
    const first = await http.send(client, 'POST', w.path, w.body, { ...options, key, timeoutMs: SHORT_TIMEOUT_MS });
    if (typeof first !== 'string' && first.status !== 202 && first.status < 500 && first.status !== 429) {
      learn(first);
      return first;
    }
    // Gave up on this key: its command stays undecided until it is asked again at the end.
    world.unlearned.push({ client, path: w.path, body: w.body, key, headers: options.headers, command, learn });
    key = w.member.keys.uuid();
    command = model.begin(client, `${w.label} (again, new key)`, w.possible, w.allowedFinal);
    w.onBegin?.(command, key);
    learn = learnOnce(command);
    findings.trace(client, `${w.label} again key=${key.slice(0, 8)} after ${typeof first === 'string' ? first : first.status}`);
  }
  let answer: Answer | null;
  if (misbehave === 'concurrent') {
    const [a, b] = await Promise.all([http.decide(client, w.path, w.body, key, options), http.decide(client, w.path, w.body, key, options)]);
    if (a) learn(a);
    if (b) learn(b);
    answer = a ?? b;
  } else {
    answer = await http.decide(client, w.path, w.body, key, options);
    if (answer) learn(answer);
  }
  if (!answer) {
    world.unlearned.push({ client, path: w.path, body: w.body, key, headers: options.headers, command, learn });
    return null;
  }
  if (misbehave === 'replay') {
    const again = await http.decide(client, w.path, w.body, key, options);
    if (again) learn(again);
  } else if (misbehave === 'other_body' && answer.status >= 400 && w.learnOtherAsNew) {
    // The refusal was not kept: the other body runs as a new request under the key.
    const learnOther = w.learnOtherAsNew;
    const other = model.begin(client, `${w.label} (other body, after a refusal)`, [], w.allowedFinal);
    w.onBegin?.(other, key);
    const otherAnswer = await http.decide(client, w.path, w.otherBody, key, options);
    if (otherAnswer) learnOther(other, otherAnswer);
    else world.unlearned.push({ client, path: w.path, body: w.otherBody, key, headers: options.headers, command: other, learn: (a) => learnOther(other, a) });
  } else if (misbehave === 'other_body') {
    const other = await http.decide(client, w.path, w.otherBody, key, options);
    if (other) {
      const ok = findings.expect(other.status === 409 && other.body?.error === 'idempotency_conflict', 'the same key with another body is 409 idempotency_conflict',
        () => `${w.label}: the other body answered ${other.status} ${JSON.stringify(other.body).slice(0, 200)}`, [client]);
      // Whatever it did, the model must know it, or every later balance would be off; an answer
      // naming the first answer's resource moved nothing more.
      if (!ok && other.status < 300 && w.idField(other.body) !== w.idField(answer.body)) w.learn(model.begin(client, `${w.label} (other body)`, [], w.allowedFinal), other);
    }
  }
  return answer;
}

/** Checks a money-moving answer against the model: created only if the funds may have been there, refused for want of them only if they may not. */
export function fundsCheck(world: World, command: Command, member: Member, currency: string, amount: Amount, answer: Answer, account = member.accountId): void {
  const { lo, hi } = world.model.range(account, currency, command);
  if (answer.status === 200 || answer.status === 201) {
    world.findings.expect(hi.isGreaterThanOrEqualTo(amount), 'a creation only when the funds may have been there',
      () => `${command.label}: created, but the model's ${currency} balance was at most ${hi.toFixed()}`, [member.index]);
  } else if (answer.body?.error === 'insufficient_funds') {
    world.findings.expect(lo.isLessThan(amount), 'insufficient_funds only when the funds may have been short',
      () => `${command.label}: refused, but the model's ${currency} balance was at least ${lo.toFixed()}`, [member.index]);
  }
}

export function unexpected(world: World, command: Command, member: Member, answer: Answer, allowed: string[]): void {
  world.findings.expect(allowed.includes(answer.body?.error), 'every refusal one the model allows',
    () => `${command.label}: ${answer.status} ${JSON.stringify(answer.body).slice(0, 300)}`, [member.index]);
}

export function illegalIdCheck(world: World, member: Member, label: string, field: string, form: IdForm, answer: Answer | null): void {
  if (!answer) return;
  world.findings.expect(answer.status === 400 && answer.body?.error === 'invalid_request' && String(answer.body?.details ?? '').includes(field),
    'an illegal id is 400 invalid_request naming its field', () => `${label}: ${field} in form ${form} answered ${answer.status} ${JSON.stringify(answer.body).slice(0, 300)}`, [member.index]);
}

