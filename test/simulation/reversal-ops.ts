// Reversals of internal transfers (README "Reversals"): a client gives back part or all of one it
// sent, alone or two at once on one transfer. The model knows each transfer's amount and its
// reversals, decided or not, so it bounds what is left: a reversal is answered only for what may
// be left and the recipient may still have, and refused reversal_exceeded or insufficient_funds
// only when the model allows that little was left or the recipient was short.
import { Money, type Amount } from '../../ledger/money';
import type { Command } from './model';
import type { Misbehaviour } from './plan';
import { pickOf } from './wallet-ops';
import type { Member, World } from './world';
import { delta, unexpected, write } from './writes';

/** An internal transfer the model saw completed, and its reversals (each with what it gave back once answered). */
export interface SimInternal { id: string; client: number; to: number; currency: string; amount: Amount; reversals: Array<{ command: Command; asked: Amount | null; given: Amount | null }> }

export type ReversalOp = { kind: 'reverse'; pick: number; share: number; full: boolean; race: boolean; misbehave: Misbehaviour };

/** What the other reversals of `t` gave back for certain, and what they may have (undecided ones asking what they asked, or all). */
function reversedBy(t: SimInternal, except?: Command): { certain: Amount; possible: Amount } {
  let certain = new Money(0);
  let possible = new Money(0);
  for (const r of t.reversals) {
    if (r.command === except || r.command.state === 'refused') continue;
    if (r.given !== null) { certain = certain.plus(r.given); possible = possible.plus(r.given); } else possible = possible.plus(r.asked ?? t.amount);
  }
  return { certain, possible: Money.min(possible, t.amount) };
}

function reverse(world: World, member: Member, t: SimInternal, asked: Amount | null, misbehave: Misbehaviour): Promise<unknown> {
  const payee = world.members[t.to];
  const body = asked === null ? {} : { amount: asked.toFixed(2) };
  const most = asked ?? t.amount;
  return write(world, {
    member, label: `c${member.index} reverse ${asked?.toFixed(2) ?? 'the rest'} of transfer ${t.id.slice(0, 8)} (${t.amount.toFixed(2)} ${t.currency} to c${t.to})`,
    path: `/v1/transfers/${t.id}/reversals`, body, otherBody: { amount: (asked ?? new Money('0.01')).plus('0.01').toFixed(2) },
    possible: [delta(payee.accountId, t.currency, most.negated()), delta(member.accountId, t.currency, most)], idField: (b) => b?.id,
    // Each command under its own key is a reversal of its own (a client that gave up on a key sends another).
    onBegin: (command) => { t.reversals.push({ command, asked, given: null }); },
    learn: (command, answer) => {
      const { certain, possible } = reversedBy(t, command);
      const leftHi = t.amount.minus(certain);
      const leftLo = t.amount.minus(possible);
      if (answer.status !== 201 && answer.status !== 200) {
        world.model.refuse(command);
        const { lo } = world.model.range(payee.accountId, t.currency, command);
        const allowed = [
          ...((asked === null ? leftLo.isZero() : asked.isGreaterThan(leftLo)) ? ['reversal_exceeded'] : []),
          ...(lo.isLessThan(asked ?? leftHi) ? ['insufficient_funds'] : []),
        ];
        unexpected(world, command, member, answer, allowed);
        return;
      }
      const given = new Money(answer.body?.amount ?? -1);
      const { hi } = world.model.range(payee.accountId, t.currency, command);
      world.findings.expect(hi.isGreaterThanOrEqualTo(given), 'a reversal only when the recipient may have had the amount',
        () => `${command.label}: gave back ${given.toFixed(2)}, the recipient's ${t.currency} was at most ${hi.toFixed(2)}`, [member.index]);
      world.findings.expect(answer.body?.transfer_id === t.id && answer.body?.currency === t.currency && answer.body?.status === 'completed'
        && given.isPositive() && given.isLessThanOrEqualTo(leftHi) && (asked === null ? given.isGreaterThanOrEqualTo(leftLo) : given.isEqualTo(asked)),
      "a reversal gives back what was asked, or all that was left, and never more than is left", () => `${command.label}: ${JSON.stringify(answer.body).slice(0, 300)}; left ${leftLo.toFixed(2)} to ${leftHi.toFixed(2)}`, [member.index]);
      t.reversals.find((r) => r.command === command)!.given = given;
      world.model.answer(command, [delta(payee.accountId, t.currency, given.negated()), delta(member.accountId, t.currency, given)]);
    },
  }, misbehave);
}

export async function runReversalOp(world: World, member: Member, op: ReversalOp): Promise<void> {
  const t = pickOf(member.internals, op.pick);
  if (!t) return;
  const { possible } = reversedBy(t);
  const left = t.amount.minus(possible);
  // A share of what is left for certain (above 1: more than is left), at least a cent.
  const asked = (): Amount | null => (op.full ? null : Money.max(new Money('0.01'), left.times(op.share).decimalPlaces(2, Money.ROUND_DOWN)));
  if (op.race) await Promise.all([reverse(world, member, t, asked(), null), reverse(world, member, t, asked(), null)]);
  else await reverse(world, member, t, asked(), op.misbehave);
}
