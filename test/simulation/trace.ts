// The run's trace (.simulation/trace-seed-N.jsonl, one JSON line each): every operation a client
// draws, every request it sends after set-up and the answer, and every fault, in the order they
// happened. The ids the service made are written as names (⟪c2.account⟫, ⟪id17⟫, ⟪id17:U⟫ for the
// id in upper case), so a replay on the new accounts of another run can send the same requests
// (replay.ts) and say which answer first differs.
import fs from 'node:fs';
import path from 'node:path';
import type { Sent } from './http';
import { CLOCK_ERA_MS, type ClockOp } from './clock-plan';
import type { Fault, Op } from './plan';
import type { Member } from './world';

export type TraceLine =
  | { t: 'run'; seed: number; clients: number }
  | { t: 'op'; client: number; op: Op | ClockOp }
  | { t: 'req'; seq: number; client: number; method: string; path: string; body: string | null; key: string | null; auth: Auth; scenario: string | null }
  | { t: 'ans'; seq: number; status: number | 'timeout' | 'network'; error: string | null; body: string | null }
  | { t: 'fault'; fault: Fault };

/** Which of its member's credentials a request carried, or (`as:` a name) another credential of the set-up's (a clock account's key). */
export type Auth = 'key' | 'session' | 'none' | `as:${string}`;

const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/gi;
const NAME = /⟪([\w.-]+)(?::([UM]))?⟫/g;
const WHOLE_NAME = /^⟪([\w.-]+)(?::[UM])?⟫$/;
const INSTANT = /\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?Z/g;
const OFFSET = /⟪t([+-]\d+)⟫/g;
const IS_UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** The id in the mixed form the clients use (ids.ts): even positions upper-case. */
const mixed = (id: string): string => [...id].map((c, i) => (i % 2 === 0 ? c.toUpperCase() : c.toLowerCase())).join('');

/** Names of the values the service made (ids, and the set-up's emails and account numbers), both ways. */
export class Names {
  private readonly nameOf = new Map<string, string>();
  private readonly valueOf = new Map<string, string>();
  /** Values that are not ids, written as a whole JSON string ("…"). */
  private readonly literals: string[] = [];
  /** Credentials of the set-up other than the members' own, both ways. */
  private readonly credentialNames = new Map<string, string>();
  private readonly credentials = new Map<string, string>();
  private next = 0;
  /**
   * The wall clock a request is sent by, once the trace has begun (null before: the set-up's
   * requests keep their instants). A wall instant in a request (a hold's expires_at) is written as
   * its offset from the moment the request was sent, and read back from the moment the replay sends
   * it: a hold that expired 5 s after its request in the run does so in the replay too, however the
   * replay's pace (one request at a time) differs from the run's.
   */
  clock: (() => number) | null = null;
  /** When a request under each Idempotency-Key was first sent: a retry's instants count from there, so its body is its first send's. */
  private readonly firstSent = new Map<string, number>();

  /** The instant a request's wall instants count from: its sending, or its key's first sending. */
  private sentAt(key: string | null): number {
    const now = this.clock!();
    if (key === null) return now;
    const first = this.firstSent.get(key);
    if (first !== undefined) return first;
    this.firstSent.set(key, now);
    return now;
  }

  bind(name: string, value: string, literal = false): void {
    const key = literal ? value : value.toLowerCase();
    this.nameOf.set(key, name);
    this.valueOf.set(name, key);
    if (literal) this.literals.push(value);
  }

  has(name: string): boolean { return this.valueOf.has(name); }

  bindCredential(name: string, token: string): void {
    this.credentialNames.set(token, name);
    this.credentials.set(name, token);
  }

  credentialName(token: string): string | undefined { return this.credentialNames.get(token); }

  credential(name: string): string | undefined { return this.credentials.get(name); }

  /** The set-up's values of a member, under the same names in every run. */
  bindMember(member: Member): void {
    const c = `c${member.index}`;
    this.bind(`${c}.account`, member.accountId);
    this.bind(`${c}.customer`, member.customerId);
    this.bind(`${c}.webhook`, member.webhookId);
    this.bind(`${c}.email`, member.email, true);
    member.vibans.forEach((v, i) => {
      if (typeof v.id === 'string') this.bind(`${c}.viban${i}`, v.id);
      if (typeof v.account_number === 'string') this.bind(`${c}.viban${i}.number`, v.account_number, true);
    });
  }

  /**
   * `text` with the values named; an id not named yet gets a new name when `learn` (ids in answers),
   * and wall instants in a request become offsets from its sending (`clock`; a retry's from its
   * Idempotency-Key's first sending), but for a test clock's (a replay's clocks start where the
   * run's did).
   */
  write(text: string, learn: boolean, key: string | null = null): string {
    let out = text;
    if (!learn && this.clock !== null) {
      const sent = this.sentAt(key);
      const offset = (at: string): string => (Date.parse(at) >= CLOCK_ERA_MS ? at : `⟪t${Date.parse(at) - sent >= 0 ? '+' : ''}${Date.parse(at) - sent}⟫`);
      out = out.replace(INSTANT, offset);
    }
    for (const value of this.literals) out = out.split(JSON.stringify(value)).join(`"⟪${this.nameOf.get(value)}⟫"`);
    return out.replace(UUID, (id) => {
      const lower = id.toLowerCase();
      let name = this.nameOf.get(lower);
      if (!name && learn) {
        name = `id${++this.next}`;
        this.bind(name, lower);
      }
      if (!name) return id;
      const form = id === lower ? '' : id === lower.toUpperCase() ? ':U' : id === mixed(lower) ? ':M' : null;
      return form === null ? id : `⟪${name}${form}⟫`;
    });
  }

  /** `text` with each name replaced by this run's value; throws naming a name no answer has bound. */
  read(text: string, key: string | null = null): string {
    const sent = this.clock === null ? Date.now() : this.sentAt(key);
    return text.replace(OFFSET, (_, ms: string) => new Date(sent + Number.parseInt(ms, 10)).toISOString()).replace(NAME, (_, name: string, form: string | undefined) => {
      const value = this.valueOf.get(name);
      if (value === undefined) throw new Error(`no answer of this run named ⟪${name}⟫`);
      return form === 'U' ? value.toUpperCase() : form === 'M' ? mixed(value) : value;
    });
  }

  /** Binds the names in a traced answer to the values at the same places of this run's answer. */
  learnFrom(traced: unknown, now: unknown): void {
    if (typeof traced === 'string') {
      const match = WHOLE_NAME.exec(traced);
      if (match && !this.valueOf.has(match[1]) && typeof now === 'string' && IS_UUID.test(now)) this.bind(match[1], now);
      return;
    }
    if (Array.isArray(traced) && Array.isArray(now)) traced.forEach((item, i) => this.learnFrom(item, now[i]));
    else if (traced && now && typeof traced === 'object' && typeof now === 'object') {
      for (const [field, value] of Object.entries(traced)) this.learnFrom(value, (now as Record<string, unknown>)[field]);
    }
  }
}

/** Writes the trace as the run goes, once `on` (after the set-up, which a replay runs afresh). */
export class Trace {
  private readonly out: fs.WriteStream;
  private seq = 0;
  on = false;
  constructor(readonly file: string, readonly names: Names, private readonly members: () => Member[]) {
    fs.mkdirSync(path.dirname(file), { recursive: true });
    this.out = fs.createWriteStream(file);
  }

  private line(line: TraceLine): void { if (this.on) this.out.write(`${JSON.stringify(line)}\n`); }

  /** The first line: what a replay needs to make the same set-up. */
  header(seed: number, clients: number): void { this.out.write(`${JSON.stringify({ t: 'run', seed, clients } satisfies TraceLine)}\n`); }

  op(client: number, op: Op | ClockOp): void { this.line({ t: 'op', client, op }); }
  fault(fault: Fault): void { this.line({ t: 'fault', fault }); }

  request(client: number, method: string, urlPath: string, body: unknown, key: string | undefined, token: string | undefined, scenario: string | null): number {
    if (!this.on) return 0;
    const member = this.members()[client];
    const other = token === undefined ? undefined : this.names.credentialName(token);
    const auth: Auth = token === undefined ? 'none' : token === member?.key ? 'key' : other !== undefined ? `as:${other}` : 'session';
    const seq = ++this.seq;
    this.line({
      t: 'req', seq, client, method, path: this.names.write(urlPath, false, key ?? null), body: body === undefined ? null : this.names.write(JSON.stringify(body), false, key ?? null),
      key: key ?? null, auth, scenario,
    });
    return seq;
  }

  answer(seq: number, sent: Sent): void {
    if (!this.on || seq === 0) return;
    if (typeof sent === 'string') return this.line({ t: 'ans', seq, status: sent, error: null, body: null });
    this.line({ t: 'ans', seq, status: sent.status, error: sent.body?.error ?? null, body: sent.body === null ? null : this.names.write(JSON.stringify(sent.body), true) });
  }

  close(): Promise<void> { return new Promise((resolve) => this.out.end(resolve)); }
}

export function readTrace(file: string): TraceLine[] {
  return fs.readFileSync(file, 'utf8').split('\n').filter((l) => l.trim() !== '').map((l) => JSON.parse(l) as TraceLine);
}
