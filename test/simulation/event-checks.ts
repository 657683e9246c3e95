// The events against the model, once the system is quiet: each transfer and payment the model saw
// made has its events once each, its final one naming the status it ended in, and no event names a
// transfer or payment the model never saw made (a refused command makes none); and the events on
// Kafka equal the events table: every event the ledger numbered for a run's account is on the
// domain.events topic (a copy published again by the sweeper is one event, by its id), and no other
// event of the account is there, read from the beginning of the run's own topic.
import { randomUUID } from 'node:crypto';
import { createKafka } from '../../src/kafka/client';
import { AvroCodec, createRegistry } from '../../src/kafka/registry';
import { ACCOUNT_ID_HEADER, TopicNames, TOPICS } from '../../src/kafka/topics';
import type { Db } from '../../src/db';
import { KAFKA_BROKERS, SCHEMA_REGISTRY_URL, sleep } from '../bench/harness';
import type { World } from './world';

/** What the end read found of each transfer and payment the model saw made: its sender, and the status it ended in. */
export interface Ended { type: 'transfer' | 'payment'; status: string; account: string; client: number; label: string }

export async function eventsAsModelled(db: Db, world: World, ended: Map<string, Ended>): Promise<void> {
  const index = new Map(world.members.map((m) => [m.accountId, m.index]));
  const rows: Array<{ account_id: string; type: string; resource_type: string; resource_id: string }> = await db.raw(
    `SELECT account_id, payload->>'type' AS type, payload->>'resource_type' AS resource_type, payload->>'resource_id' AS resource_id
       FROM account_events WHERE account_id = ANY(?::uuid[]) AND payload->>'resource_type' IN ('transfer', 'payment') ORDER BY account_id, account_seq`,
    [[...index.keys()]]).then((r: any) => r.rows);
  const byResource = new Map<string, string[]>(); // "account resource" → event types in order
  for (const row of rows) {
    const key = `${row.account_id} ${row.resource_id}`;
    byResource.set(key, [...(byResource.get(key) ?? []), row.type]);
  }
  const problems: Array<[number, string]> = [];
  for (const [id, end] of ended) {
    const types = byResource.get(`${end.account} ${id}`) ?? [];
    const terminal = types.filter((t) => ['completed', 'failed', 'rolled_back', 'cancelled'].includes(t.split('.')[1]));
    const twice = types.filter((t, i) => t !== 'transfer.reversed' && types.indexOf(t) !== i);
    if (terminal.length !== 1 || terminal[0] !== `${end.type}.${end.status}` || twice.length > 0) {
      problems.push([end.client, `${end.label} (${id}) ended ${end.status}; its sender's events: ${types.join(', ') || 'none'}`]);
    }
  }
  // One transfer.reversed of its sender for each reversal answered.
  for (const member of world.members) {
    for (const t of member.internals) {
      const answered = t.reversals.filter((r) => r.given !== null).length;
      const announced = (byResource.get(`${member.accountId} ${t.id}`) ?? []).filter((type) => type === 'transfer.reversed').length;
      if (announced !== answered) problems.push([member.index, `transfer ${t.id}: ${answered} reversals answered, ${announced} transfer.reversed events`]);
    }
  }
  for (const key of byResource.keys()) {
    const [account, resource] = key.split(' ');
    if (!ended.has(resource)) problems.push([index.get(account)!, `events name ${resource}, which the model never saw made: ${byResource.get(key)!.join(', ')}`]);
  }
  for (const [client, problem] of problems.slice(0, 20)) world.findings.expect(false, 'each transfer and payment made has its events once, its last naming how it ended; none for anything else', () => problem, [client]);
  if (problems.length === 0) world.findings.pass();
}

export async function kafkaEventsAgree(db: Db, world: World, topicPrefix: string): Promise<void> {
  const index = new Map(world.members.map((m) => [m.accountId, m.index]));
  const rows: Array<{ account_id: string; id: string }> = await db('account_events').whereIn('account_id', [...index.keys()]).select('account_id', 'id');
  const stored = new Set(rows.map((r) => r.id));
  const seen = new Map<string, string>(); // event id → account id
  const names = new TopicNames(topicPrefix);
  const codec = new AvroCodec(createRegistry(SCHEMA_REGISTRY_URL), names);
  // The reader's group id is for this read alone (not the run's seeded ids: it names no resource).
  const consumer = createKafka(KAFKA_BROKERS.split(','), 'simulation-events-reader').consumer({ groupId: `${topicPrefix}simulation-reader.${randomUUID()}`, maxWaitTimeInMs: 100 });
  await consumer.connect();
  try {
    await consumer.subscribe({ topic: names.full(TOPICS.domainEvents), fromBeginning: true });
    await consumer.run({
      eachMessage: async ({ message }) => {
        const account = message.headers?.[ACCOUNT_ID_HEADER]?.toString();
        if (!account || !index.has(account)) return;
        const event = await codec.decode<{ id: string; account_id: string }>(message.value!);
        seen.set(event.id, event.account_id);
      },
    });
    const deadline = Date.now() + 120_000;
    while ([...stored].some((id) => !seen.has(id)) && Date.now() < deadline) await sleep(500);
  } finally {
    await consumer.disconnect();
  }
  const missing = [...stored].filter((id) => !seen.has(id));
  const extra = [...seen.keys()].filter((id) => !stored.has(id));
  world.findings.expect(missing.length === 0 && extra.length === 0, 'the events on Kafka equal the events table',
    () => `${missing.length} of ${stored.size} stored events missing from domain.events (e.g. ${missing.slice(0, 3).join(', ')}); ${extra.length} on Kafka and not stored (e.g. ${extra.slice(0, 3).join(', ')})`,
    [...new Set([...missing.map((id) => rows.find((r) => r.id === id)!.account_id), ...extra.map((id) => seen.get(id)!)])].map((a) => index.get(a) ?? -1).filter((i) => i >= 0));
  console.log(`  events: ${stored.size} in the events table, ${seen.size} on domain.events`);
}
