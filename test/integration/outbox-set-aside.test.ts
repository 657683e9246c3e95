// A poison outbox round against the real Postgres, Kafka, schema registry and mock rails: a
// message that can never be encoded, or that the broker refuses as too large, is set aside and
// listed for the operator (master key); the other messages of its round and every round behind
// it still go, partner instructions included. The rounds are written straight into outbox_rounds
// as a ledger process that died before publishing them would have left them; the service's own
// sweeper takes them.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { db, testService } from '../hooks';
import { call, eventually } from '../support/http';
import { expectError } from '../support/expect';

const base = () => testService().baseUrl;
const master = () => ({ token: testService().runtime.config.masterKey });

/** A transfer.execute instruction for the fiat rail, as the ledger writes it (src/outbox/rows.ts). */
function instruction(transferId: string, extra = ''): { topic: string; key: string; payload: Record<string, unknown> } {
  const payload = { transfer_id: transferId, amount: '1.00', currency: 'USD', beneficiary: { note: extra }, attempt: 0, scenario: null };
  return {
    topic: 'partner.commands', key: transferId,
    payload: {
      id: `execute:${transferId}:0`, type: 'transfer.execute', partner: 'fiat', resource_id: transferId, account_id: randomUUID(),
      issued_at: new Date().toISOString(), payload: JSON.stringify(payload),
    },
  };
}

/** A round its writer died before publishing, `ageS` seconds ago. */
async function leftBehind(ageS: number, messages: unknown[]): Promise<string> {
  const roundId = randomUUID();
  await db().raw(`INSERT INTO outbox_rounds (round_id, created_at, messages, events) VALUES (?, now() - make_interval(secs => ?), ?::jsonb, '[]'::jsonb)`,
    [roundId, ageS, JSON.stringify(messages)]);
  return roundId;
}

/** The fiat rail's payment under `reference`, once the instruction reached it. */
const railPayment = (reference: string) => db()('mock_rails.payments').where({ partner: 'fiat', reference }).first('id');

describe('outbox sweeper with a poison round', function () {
  this.timeout(90_000);

  it('sets aside what Kafka can never take, sends the rest of the round and the rounds behind it, and lists it for the operator', async () => {
    const [sameRound, nextRound, tooLargeRound, broken] = [randomUUID(), randomUUID(), randomUUID(), randomUUID()];
    const unencodable = instruction(broken);
    delete (unencodable.payload as Record<string, unknown>).partner; // the schema requires it
    const poison = await leftBehind(120, [unencodable, instruction(sameRound)]);
    const tooLarge = instruction(tooLargeRound, 'x'.repeat(1_200_000)); // above the broker's 1 MiB record bound
    const large = await leftBehind(110, [tooLarge]);
    const next = await leftBehind(100, [instruction(nextRound)]);

    // The partner gets the instruction beside the unencodable one and the one of the round behind.
    await eventually(async () => ((await railPayment(sameRound)) && (await railPayment(nextRound)) ? true : undefined), 40_000,
      'the instructions of the poison round and of the round behind it reach the partner');
    assert.equal(await railPayment(broken), undefined);
    await eventually(async () => ((await db()('outbox_rounds').whereIn('round_id', [poison, large, next]).first()) ? undefined : true), 20_000,
      'every round is done with');

    const listed = await call(base(), 'GET', '/v1/outbox/set-aside?replayed=false&limit=100', undefined, master());
    assert.equal(listed.status, 200, JSON.stringify(listed.body));
    const mine = listed.body.data.filter((m: { round_id: string }) => m.round_id === poison || m.round_id === large);
    assert.equal(mine.length, 2, JSON.stringify(listed.body));
    const bad = mine.find((m: { round_id: string }) => m.round_id === poison);
    assert.equal(bad.topic, 'partner.commands');
    assert.equal(bad.key, broken);
    assert.match(bad.reason, /^encoding failed/);
    const big = mine.find((m: { round_id: string }) => m.round_id === large);
    assert.match(big.reason, /MESSAGE_TOO_LARGE|larger than the max message size/);
    const summary = await call(base(), 'GET', '/v1/outbox/set-aside/summary', undefined, master());
    assert.ok(summary.body.waiting['partner.commands'] >= 2, JSON.stringify(summary.body));

    // A replay of a message still broken is refused and leaves it waiting.
    expectError(await call(base(), 'POST', `/v1/outbox/set-aside/${bad.id}/replay`, {}, { ...master(), idempotencyKey: randomUUID() }),
      422, 'message_unsendable', 'payload');
    assert.equal((await call(base(), 'GET', `/v1/outbox/set-aside/${bad.id}`, undefined, master())).body.replayed_at, null);

    // Once mended (here in place, as an operator's fix would), the replay sends it to the partner.
    await db()('outbox_set_aside').where('id', bad.id).update({ payload: JSON.stringify(instruction(broken).payload) });
    const replayed = await call(base(), 'POST', `/v1/outbox/set-aside/${bad.id}/replay`, {}, { ...master(), idempotencyKey: randomUUID() });
    assert.equal(replayed.status, 200, JSON.stringify(replayed.body));
    assert.notEqual(replayed.body.replayed_at, null);
    await eventually(async () => ((await railPayment(broken)) ? true : undefined), 30_000, 'the replayed instruction reaches the partner');
  });
});
