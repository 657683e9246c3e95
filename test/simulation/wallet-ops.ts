// A client's wallet and hold operations (README "Wallets and holds"), each answer checked against
// the model as it arrives. The model keeps four balances per account and currency: the main
// available (the account's id, as every other operation keys it), the main held, and each
// wallet's available and held. A hold is a command of its own whose release may still move money
// until an answer (or, at the end, a read) says how it ended; a capture succeeds only while the
// hold may still be active and has enough left, and is refused only when the model allows it.
import { Money, type Amount } from '../../ledger/money';
import { derivedUuid, idempotentCommandId } from '../../src/idempotency/derived-ids';
import type { Answer } from './http';
import type { Command } from './model';
import type { Misbehaviour, WalletOp } from './plan';
import type { Member, SimHold, World } from './world';
import { delta, fundsCheck, money, unexpected, write } from './writes';

/** The model's key of a side's available balance: the account's id for "main" (as every other operation keys it), else the wallet's. */
export const availableKey = (member: Pick<Member, 'accountId'>, side: string): string => (side === 'main' ? member.accountId : `wallet:${side}`);
export const heldKey = (member: Pick<Member, 'accountId'>, side: string): string => `${availableKey(member, side)}:held`;

/** The item `at` (0 to 1) points at, or none of an empty list. */
export const pickOf = <T>(items: T[], at: number): T | undefined => (items.length === 0 ? undefined : items[Math.floor(at * items.length)]);
const created = (answer: Answer): boolean => answer.status === 200 || answer.status === 201;
const sum = (amounts: Amount[]): Amount => amounts.reduce((a, b) => a.plus(b), new Money(0));

/** What the captures other than `except` have paid for certain, and what they may have paid (undecided ones too). */
function captured(hold: SimHold, except?: Command): { certain: Amount; possible: Amount } {
  const others = hold.captures.filter((c) => c.command !== except);
  return {
    certain: sum(others.filter((c) => c.command.state === 'final').map((c) => c.amount)),
    possible: sum(others.filter((c) => c.command.state === 'final' || c.command.state === 'undecided').map((c) => c.amount)),
  };
}

/** Whether the hold may have ended before `except` was decided: an answer said so, a void or final capture may have been decided, it was due, or captures may have used it up. */
function mayHaveEnded(world: World, hold: SimHold, except: Command): boolean {
  return hold.ended !== null || hold.enders.some((c) => c !== except && c.state !== 'refused')
    || Date.now() >= hold.expiresAt - world.clockMarginMs || captured(hold, except).possible.isGreaterThanOrEqualTo(hold.amount);
}

/** The hold ended as an answer or read says: what was released goes back to available, once. */
export function endHold(world: World, hold: SimHold, how: 'captured' | 'voided' | 'expired', released: string): void {
  if (hold.ended !== null) {
    world.findings.expect(hold.ended === how, "every hold's state as the model predicts", () => `hold ${hold.id}: ended ${hold.ended}, then answered ${how}`, [hold.client]);
    return;
  }
  hold.ended = how;
  const member = world.members[hold.client];
  const amount = new Money(released);
  world.model.end(hold.command, amount.isZero() ? [] : [delta(heldKey(member, hold.side), hold.currency, amount.negated()), delta(availableKey(member, hold.side), hold.currency, amount)]);
}

/** The hold's figures in an answer add up: never more captured and released than it took. */
function checkHoldBody(world: World, hold: SimHold, body: any, label: string): void {
  const total = new Money(body?.captured_amount ?? 0).plus(body?.released_amount ?? 0);
  const ok = body?.id === hold.id && new Money(body?.amount ?? -1).isEqualTo(hold.amount) && total.isLessThanOrEqualTo(hold.amount)
    && (body.status === 'active' ? new Money(body.released_amount).isZero() : total.isEqualTo(hold.amount));
  world.findings.expect(ok, "each hold's captured + released = amount once it ends", () => `${label}: ${JSON.stringify(body).slice(0, 300)}`, [hold.client]);
}

async function walletCreate(world: World, member: Member, misbehave: Misbehaviour): Promise<void> {
  const name = `Pocket ${member.wallets.length + 1}`;
  const learnWallet = (command: Command, answer: Answer) => {
    if (!created(answer)) { unexpected(world, command, member, answer, []); world.model.refuse(command); return; }
    if (!member.wallets.includes(answer.body.id)) member.wallets.push(answer.body.id);
    world.model.answer(command, []);
  };
  await write(world, {
    member, label: `c${member.index} wallet create`, path: '/v1/wallets', body: { name }, otherBody: { name: `${name} (other)` }, possible: [], idField: (b) => b?.id,
    learn: learnWallet, learnOtherAsNew: learnWallet,
  }, misbehave);
}

async function walletTransfer(world: World, member: Member, op: Extract<WalletOp, { kind: 'wallet_transfer' }>): Promise<void> {
  let from: string | undefined = 'main';
  let to: string | undefined;
  let payee = member;
  if (op.route === 'in') to = pickOf(member.wallets, op.pick);
  else if (op.route === 'out') { from = pickOf(member.wallets, op.pick); to = 'main'; }
  else if (op.route === 'between') { from = pickOf(member.wallets, op.pick); to = pickOf(member.wallets.filter((w) => w !== from), op.pick2); }
  else { payee = world.members[op.to]; to = pickOf(payee.wallets, op.pick); }
  if (!from || !to) return;
  const amount = money(op.cents);
  const moved = [delta(availableKey(member, from), op.currency, new Money(amount).negated()), delta(availableKey(payee, to), op.currency, amount)];
  const body = { from_wallet_id: from, to_wallet_id: to, amount, currency: op.currency };
  await write(world, {
    member, label: `c${member.index} wallet transfer ${amount} ${op.currency} ${from.slice(0, 8)}->${payee === member ? '' : `c${payee.index}:`}${to.slice(0, 8)}`,
    path: '/v1/wallet-transfers', body, otherBody: { ...body, amount: money(op.cents + 1) }, possible: moved, idField: (b) => b?.id,
    learn: (command, answer) => {
      fundsCheck(world, command, member, op.currency, new Money(amount), answer, availableKey(member, from!));
      if (!created(answer)) { unexpected(world, command, member, answer, ['insufficient_funds']); world.model.refuse(command); return; }
      world.findings.expect(answer.body?.status === 'completed' && answer.body?.to_wallet_id === to, 'a wallet transfer answered completed, as sent',
        () => `${command.label}: ${JSON.stringify(answer.body).slice(0, 300)}`, [member.index]);
      world.model.answer(command, moved);
    },
  }, op.misbehave);
}

async function holdCreate(world: World, member: Member, op: Extract<WalletOp, { kind: 'hold' }>): Promise<void> {
  const side = (op.onWallet ? pickOf(member.wallets, op.pick) : undefined) ?? 'main';
  const amount = money(op.cents);
  const expiresAt = Date.now() + op.expiresInS * 1_000;
  const body = { amount, currency: op.currency, expires_at: new Date(expiresAt).toISOString(), description: 'simulation', ...(side === 'main' ? {} : { wallet_id: side }) };
  const taken = [delta(availableKey(member, side), op.currency, new Money(amount).negated()), delta(heldKey(member, side), op.currency, amount)];
  const release = [delta(heldKey(member, side), op.currency, new Money(amount).negated()), delta(availableKey(member, side), op.currency, amount)];
  const keys = new Map<Command, string>();
  await write(world, {
    member, label: `c${member.index} hold ${amount} ${op.currency} on ${side.slice(0, 8)} for ${op.expiresInS} s`, path: '/v1/holds', body,
    otherBody: { ...body, amount: money(op.cents + 1) }, possible: taken, idField: (b) => b?.id,
    onBegin: (command, key) => { keys.set(command, key); },
    learn: (command, answer) => {
      fundsCheck(world, command, member, op.currency, new Money(amount), answer, availableKey(member, side));
      if (!created(answer)) {
        // A short hold whose request is repeated past its expires_at is refused naming it.
        const late = answer.body?.error === 'invalid_request' && answer.body?.details === 'expires_at' && Date.now() >= expiresAt - world.clockMarginMs;
        if (!late) unexpected(world, command, member, answer, ['insufficient_funds']);
        world.model.refuse(command);
        // An earlier attempt under the key may have made the hold (its answer lost): the route
        // names the hold after the key, so it is read at the end (hold-checks.ts, readDoubtful).
        const key = keys.get(command);
        if (late && key) {
          const hold: SimHold = { id: derivedUuid('hold', idempotentCommandId(member.accountId, key)), client: member.index, side, currency: op.currency, amount: new Money(amount), expiresAt, command, captures: [], enders: [], ended: null };
          member.doubtful.push({ hold, adopt: () => { world.model.answer(command, taken, release); member.holds.push(hold); } });
        }
        return;
      }
      const hold: SimHold = { id: answer.body.id, client: member.index, side, currency: op.currency, amount: new Money(amount), expiresAt, command, captures: [], enders: [], ended: null };
      checkHoldBody(world, hold, answer.body, command.label);
      world.findings.expect(answer.body.wallet_id === side && answer.body.status === 'active', 'a hold is answered active, on its side',
        () => `${command.label}: ${JSON.stringify(answer.body).slice(0, 300)}`, [member.index]);
      member.holds.push(hold);
      world.model.answer(command, taken, release);
    },
  }, op.misbehave);
}

/** Holds the model thinks may be active (or just due, so captures and voids race the expiry). */
const liveHold = (member: Member, at: number): SimHold | undefined => pickOf(member.holds.filter((h) => h.ended === null && Date.now() < h.expiresAt + 5_000), at);

function capture(world: World, member: Member, hold: SimHold, payee: Member, cents: number, final: boolean, misbehave: Misbehaviour): Promise<Answer | null> {
  const amount = money(cents);
  const paid = new Money(amount);
  const endedAtSend = hold.ended;
  const sentAt = Date.now();
  const moved = [delta(heldKey(member, hold.side), hold.currency, paid.negated()), delta(payee.accountId, hold.currency, paid)];
  const body = { amount, recipient_email: payee.email, final };
  return write(world, {
    member, label: `c${member.index} capture ${amount} of hold ${hold.id.slice(0, 8)} to c${payee.index}${final ? ' final' : ''}`, path: `/v1/holds/${hold.id}/capture`,
    body, otherBody: { ...body, amount: money(cents + 1) }, possible: moved, idField: (b) => b?.id,
    onBegin: (command) => {
      hold.captures.push({ command, amount: paid });
      if (final) hold.enders.push(command);
    },
    learn: (command, answer) => {
      if (!created(answer)) {
        world.model.refuse(command);
        const allowed = [
          ...(paid.isGreaterThan(hold.amount.minus(captured(hold, command).possible)) ? ['hold_exceeded'] : []),
          ...(mayHaveEnded(world, hold, command) ? ['hold_not_active'] : []),
        ];
        unexpected(world, command, member, answer, allowed);
        return;
      }
      world.findings.expect(endedAtSend === null && sentAt < hold.expiresAt + world.clockMarginMs, 'a hold that ended takes no capture',
        () => `${command.label}: captured, but the hold had ended (${endedAtSend ?? `expired at ${new Date(hold.expiresAt).toISOString()}`})`, [member.index]);
      world.findings.expect(paid.plus(captured(hold, command).certain).isLessThanOrEqualTo(hold.amount), 'captures never exceed the hold',
        () => `${command.label}: ${paid.toFixed()} captured beside ${captured(hold, command).certain.toFixed()} of ${hold.amount.toFixed()}`, [member.index]);
      checkHoldBody(world, hold, answer.body, command.label);
      world.model.answer(command, moved);
      if (answer.body?.status === 'captured') endHold(world, hold, 'captured', answer.body.released_amount);
      else world.findings.expect(!final, 'a final capture ends the hold', () => `${command.label}: ${answer.body?.status}`, [member.index]);
    },
  }, misbehave);
}

function voidHold(world: World, member: Member, hold: SimHold, misbehave: Misbehaviour): Promise<Answer | null> {
  const endedAtSend = hold.ended;
  const sentAt = Date.now();
  return write(world, {
    member, label: `c${member.index} void hold ${hold.id.slice(0, 8)}`, path: `/v1/holds/${hold.id}/void`, body: undefined, otherBody: undefined, possible: [], idField: (b) => b?.id,
    onBegin: (command) => { hold.enders.push(command); },
    learn: (command, answer) => {
      if (!created(answer)) {
        world.model.refuse(command);
        unexpected(world, command, member, answer, mayHaveEnded(world, hold, command) ? ['hold_not_active'] : []);
        return;
      }
      world.findings.expect(endedAtSend === null && sentAt < hold.expiresAt + world.clockMarginMs && answer.body?.status === 'voided', 'a hold that ended takes no void',
        () => `${command.label}: ${answer.body?.status}, the model's ${endedAtSend ?? `expiring at ${new Date(hold.expiresAt).toISOString()}`}`, [member.index]);
      checkHoldBody(world, hold, answer.body, command.label);
      world.model.answer(command, []);
      endHold(world, hold, 'voided', answer.body?.released_amount ?? '0');
    },
  }, misbehave);
}

/** What a capture asks for: `share` of what is left for certain, at least a cent. */
const captureCents = (hold: SimHold, share: number): number => Math.max(1, Math.floor(hold.amount.minus(captured(hold).possible).times(100).times(share).toNumber()));

export async function runWalletOp(world: World, member: Member, op: WalletOp): Promise<void> {
  switch (op.kind) {
    case 'wallet_create': return walletCreate(world, member, op.misbehave);
    case 'wallet_transfer': return walletTransfer(world, member, op);
    case 'hold': return holdCreate(world, member, op);
    default: break;
  }
  const hold = liveHold(member, op.pick);
  if (!hold) return;
  switch (op.kind) {
    case 'capture': await capture(world, member, hold, world.members[op.to], captureCents(hold, op.share), op.final, op.misbehave); return;
    case 'void': await voidHold(world, member, hold, op.misbehave); return;
    // One outcome each: the void wins (the capture refused) or the capture goes first (the void releases the rest).
    case 'capture_void_race': await Promise.all([capture(world, member, hold, world.members[op.to], captureCents(hold, op.share), false, null), voidHold(world, member, hold, null)]); return;
    // Two captures of all that is left: one is paid, the other refused.
    case 'captures_race': {
      const cents = captureCents(hold, 1);
      await Promise.all([capture(world, member, hold, world.members[op.to], cents, false, null), capture(world, member, hold, world.members[op.other], cents, false, null)]);
    }
  }
}
