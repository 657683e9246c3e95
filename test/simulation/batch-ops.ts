// A client's transfer batches (README "Transfer batches"), each answer checked against the model as
// it arrives: every item answered in the order sent, each decided against the balance the items
// before it left (atomic: every item created or none; not atomic: each alone), an item refused
// only as a single transfer would be, and the money the created items moved taught to the model.
// At the end each batch is read again and its transfers counted in the service's tables: a fault
// may neither lose nor repeat an item.
import { Money, type Amount } from '../../ledger/money';
import type { Db } from '../../src/db';
import type { Answer } from './http';
import type { Command, Delta } from './model';
import { TRANSFER_SCENARIOS, type BatchItemPlan, type BatchOp } from './plan';
import type { Member, SimBatch, World } from './world';
import { payoutAt } from './rates';
import { delta, MAX_RATE, money, unexpected, write } from './writes';

/** An item as sent, with what it may move and the refusal it must get whatever the balance (null: a valid item). */
interface Item {
  plan: BatchItemPlan;
  body: Record<string, unknown>;
  currency: string;
  payout: string;
  amount: Amount;
  payee: Member | null;
  mustRefuse: { code: string; field: string } | null;
}

function itemOf(world: World, member: Member, plan: BatchItemPlan): Item {
  const item = itemBody(world, member, plan);
  if (plan.note !== null) item.body = { ...item.body, note: plan.note };
  return item;
}

function itemBody(world: World, member: Member, plan: BatchItemPlan): Item {
  const payee = world.members[plan.to];
  const amount = money(plan.cents);
  const base = { plan, amount: new Money(amount), payee, mustRefuse: null };
  switch (plan.kind) {
    case 'internal': case 'too_much':
      return { ...base, body: { recipient_email: payee.email, amount, currency: plan.currency }, currency: plan.currency, payout: plan.currency,
        mustRefuse: plan.kind === 'too_much' ? { code: 'insufficient_funds', field: 'amount' } : null };
    case 'chain': return { ...base, body: { recipient_email: payee.email, amount, currency: 'USDC' }, currency: 'USDC', payout: 'USDC' };
    case 'bank': {
      const viban = payee.vibans.find((v) => v.currency === plan.payout)!;
      const bank = { country: viban.bank_country, bank_name: viban.bank_name, account_number: viban.account_number, currency: plan.payout };
      return { ...base, body: { recipient: { email: payee.email, name: 'Member', bank }, amount, currency: plan.currency }, currency: plan.currency, payout: plan.payout };
    }
    case 'nobody':
      return { ...base, payee: null, body: { recipient_email: `nobody-${member.keys.uuid()}@example.com`, amount, currency: plan.currency }, currency: plan.currency, payout: plan.currency,
        mustRefuse: { code: 'recipient_not_found', field: 'recipient_email' } };
    case 'self':
      return { ...base, payee: null, body: { recipient_email: member.email, amount, currency: plan.currency }, currency: plan.currency, payout: plan.currency,
        mustRefuse: { code: 'invalid_request', field: 'recipient_email' } };
    case 'unknown_bank': {
      const bank = { country: 'DE', bank_name: 'Nobody Bank', account_number: `DE00${String(plan.cents).padStart(18, '9')}`, currency: plan.currency };
      return { ...base, payee: null, body: { recipient: { email: 'nobody@example.com', name: 'Nobody', bank }, amount, currency: plan.currency }, currency: plan.currency, payout: plan.currency,
        mustRefuse: { code: 'external_send_blocked', field: 'recipient.bank.account_number' } };
    }
  }
}

const created = (answer: Answer): boolean => answer.status === 200 || answer.status === 201;
/** What a completed item paid, as the model predicts it: the amount, or at another currency the amount at the item's own rate, rounded down (the rate judged by the published table). */
function paidOut(world: World, member: Member, label: string, item: Item, t: any, sentAt: number): Amount {
  const predicted = item.payout === item.currency ? item.amount : t.fx ? payoutAt(item.amount, t.fx.rate) : null;
  if (item.payout !== item.currency && t.fx) world.rates.observe(label, member.index, item.currency, item.payout, t.fx, sentAt, Date.now());
  const paid = new Money(t.payout?.amount ?? item.amount);
  world.findings.expect(predicted !== null && paid.isEqualTo(predicted) && (t.payout?.currency ?? item.currency) === item.payout, "a batch item's payout is its amount, or at another currency the amount at its rate rounded down",
    () => `${label}: paid ${t.payout?.amount} ${t.payout?.currency}, fx ${JSON.stringify(t.fx)}, expected ${predicted?.toFixed() ?? 'a price'} ${item.payout}`, [member.index]);
  return paid;
}

const LARGE_BATCH_ITEMS = 200;

const maxPayout = (item: Item): Amount => (item.payout === item.currency ? item.amount : item.amount.times(MAX_RATE));

/** The answer's items against the model: order, each outcome, the batch's status. Returns the indexes created. */
function checkItems(world: World, command: Command, member: Member, op: BatchOp, items: Item[], body: any): number[] {
  const { findings } = world;
  const f = (ok: boolean, check: string, detail: () => string) => findings.expect(ok, check, () => `${command.label}: ${detail()}`, [member.index]);
  const answered: any[] = Array.isArray(body?.items) ? body.items : [];
  if (!f(answered.length === items.length && answered.every((it, i) => it.index === i), 'a batch answers every item in the order sent',
    () => `${answered.length} items for ${items.length}: ${JSON.stringify(answered.map((it) => it.index)).slice(0, 200)}`)) return [];
  const refusedAny = answered.some((it) => it.status === 'refused');
  // What the items counted before this one took, per currency: created, or (atomic) decided fit and then undone.
  const taken = new Map<string, Amount>();
  const createdAt: number[] = [];
  answered.forEach((it, i) => {
    const item = items[i];
    const before = taken.get(item.currency) ?? new Money(0);
    const need = before.plus(item.amount);
    const { lo, hi } = world.model.range(member.accountId, item.currency, command);
    const what = () => `item ${i} (${item.plan.kind} ${item.amount.toFixed(2)} ${item.currency}): ${JSON.stringify(it).slice(0, 300)}`;
    if (it.status === 'refused') {
      const code = it.error?.error;
      const tooSmall = item.payout !== item.currency && item.plan.cents < 2 && code === 'invalid_request' && it.error?.details === `transfers[${i}].amount`;
      const allowed = item.mustRefuse ? [item.mustRefuse.code] : lo.isLessThan(need) ? ['insufficient_funds'] : [];
      const field = item.mustRefuse?.field ?? 'amount';
      f(tooSmall || (allowed.includes(code) && it.error?.details === `transfers[${i}].${field}` && it.transfer_id === null),
        'a batch item refused as a single transfer would be, naming its field', what);
      return;
    }
    f(item.mustRefuse === null, 'a batch item refused as a single transfer would be, naming its field', what);
    f(hi.isGreaterThanOrEqualTo(need), 'a creation only when the funds may have been there', () => `${what()}; the model's ${item.currency} balance was at most ${hi.toFixed()} for ${need.toFixed()}`);
    taken.set(item.currency, need);
    if (it.status === 'created') {
      f(!op.atomic || !refusedAny, 'an atomic batch creates every item or none', what);
      f(typeof it.transfer_id === 'string' && it.error === null, 'a created item names its transfer', what);
      createdAt.push(i);
    } else {
      f(op.atomic && refusedAny && it.status === 'not_created' && it.transfer_id === null, 'an atomic batch creates every item or none', what);
    }
  });
  const want = createdAt.length === items.length ? 'completed' : createdAt.length === 0 ? 'failed' : 'partial';
  f(body.status === want && body.atomic === op.atomic, "a batch's status says how many items were created", () => `${body.status} (atomic ${body.atomic}), expected ${want}`);
  return createdAt;
}

async function batch(world: World, member: Member, op: BatchOp): Promise<void> {
  const items = op.items.map((plan) => itemOf(world, member, plan));
  const valid = items.filter((item) => item.mustRefuse === null);
  const possible: Delta[] = valid.flatMap((item) => [delta(member.accountId, item.currency, item.amount.negated()), delta(item.payee!.accountId, item.payout, maxPayout(item))]);
  const body = { atomic: op.atomic, transfers: items.map((item) => item.body) };
  const label = `c${member.index} batch of ${items.length}${op.atomic ? ' atomic' : ''} (${items.map((item) => item.plan.kind[0]).join('').slice(0, 60)})`;
  const sentAt = Date.now();
  const send = () => write(world, {
    member, label, path: '/v1/transfer-batches', body, otherBody: { ...body, atomic: !op.atomic }, possible, idField: (b) => b?.id,
    learn: (command, answer) => {
      if (!created(answer)) { unexpected(world, command, member, answer, []); world.model.refuse(command); return; }
      const createdAt = checkItems(world, command, member, op, items, answer.body);
      const certain: Delta[] = [];
      for (const i of createdAt) {
        const item = items[i];
        const id: string = answer.body.items[i].transfer_id;
        member.transfers.push(id);
        // The debit now; the payout (or the refund) once the transfer ends, read at the end, as for a
        // single transfer: a chain item is paid by the chain partner, and waits out its outages.
        certain.push(delta(member.accountId, item.currency, item.amount.negated()));
        const payout = world.model.begin(member.index, `${label} item ${i} (${item.plan.kind})`, [], TRANSFER_SCENARIOS.none);
        payout.resource = { type: 'transfer', id };
        const refund = delta(member.accountId, item.currency, item.amount);
        world.model.answer(payout, [], [refund, delta(item.payee!.accountId, item.payout, maxPayout(item))]);
        world.open.push({
          command: payout, member,
          resolve: (t) => {
            const external = item.plan.kind === 'bank' || item.plan.kind === 'chain';
            if (t.status !== 'completed') {
              if (external) world.partnerBook.set(id, { label: `${label} item ${i}`, client: member.index, paid: null });
              return world.model.end(payout, [refund]);
            }
            const paid = paidOut(world, member, `${label} item ${i}`, item, t, sentAt);
            if (external) world.partnerBook.set(id, { label: `${label} item ${i}`, client: member.index, paid: { amount: paid, currency: item.payout } });
            world.model.end(payout, [delta(item.payee!.accountId, item.payout, paid)]);
          },
        });
      }
      world.model.answer(command, certain);
      const record: SimBatch = {
        id: answer.body.id, client: member.index, atomic: op.atomic, label,
        items: answer.body.items.map((it: any) => ({ status: it.status, transfer_id: it.transfer_id, error: it.error?.error ?? null })),
      };
      if (!member.batches.some((b) => b.id === record.id)) member.batches.push(record);
    },
  }, op.misbehave);
  // A batch of hundreds of items is an adversarial input: the other clients' latency meanwhile is bounded (latency.ts).
  await (items.length >= LARGE_BATCH_ITEMS ? world.latencies.adversary(member.index, send) : send());
}

export const runBatchOp = batch;

/**
 * Every batch read again as it was answered, and its transfers in the service's table exactly its
 * created items (an item's transfer is recorded under the batch's command id and its index): a
 * fault neither lost nor repeated one. Each created transfer can be read, as sent.
 */
export async function batchChecks(db: Db, world: World): Promise<void> {
  const { findings } = world;
  for (const member of world.members) {
    for (const b of member.batches) {
      const f = (ok: boolean, check: string, detail: () => string) => findings.expect(ok, check, () => `${b.label} ${b.id}: ${detail()}`, [member.index]);
      const answer = await world.http.read(member.index, `/v1/transfer-batches/${b.id}`, { token: member.key, timeoutMs: 30_000 });
      const read = typeof answer === 'string' ? null : answer;
      const items = read?.status === 200 ? read.body.items.map((it: any) => ({ status: it.status, transfer_id: it.transfer_id, error: it.error?.error ?? null })) : null;
      f(JSON.stringify(items) === JSON.stringify(b.items), 'a batch reads again as it was answered', () => `${read ? read.status : answer}: ${JSON.stringify(items).slice(0, 300)}`);
      const { rows } = await db.raw(`SELECT id, command_id FROM transfers WHERE command_id LIKE ? ORDER BY command_id`, [`${b.id}:%`]);
      const made = rows.map((r: any) => `${r.command_id.slice(b.id.length + 1)}=${r.id}`).sort();
      const want = b.items.flatMap((it, i) => (it.status === 'created' ? [`${i}=${it.transfer_id}`] : [])).sort();
      f(JSON.stringify(made) === JSON.stringify(want), "a batch's transfers exactly its created items, each once", () => `made ${made.join(',').slice(0, 300)}; answered ${want.join(',').slice(0, 300)}`);
      for (const it of b.items.filter((x) => x.status === 'created')) {
        const t = await world.http.read(member.index, `/v1/transfers/${it.transfer_id}`, { token: member.key, timeoutMs: 30_000 });
        f(typeof t !== 'string' && t.status === 200 && t.body.transfer_id === it.transfer_id, "every batch item's transfer can be read", () => `${it.transfer_id}: ${typeof t === 'string' ? t : t.status}`);
      }
    }
  }
}

/** What the run did with batches, for its last line. */
export function batchSummary(world: World): string {
  const batches = world.members.flatMap((m) => m.batches);
  const items = batches.flatMap((b) => b.items);
  const count = (status: string) => items.filter((it) => it.status === status).length;
  return `${batches.length} batches (${batches.filter((b) => b.atomic).length} atomic), ${items.length} items: ${count('created')} created, ${count('refused')} refused, ${count('not_created')} not created`;
}
