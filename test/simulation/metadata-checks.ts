// The end check of metadata (DESIGN.md section 5h): the transfers made with an order id in their
// metadata are found again by it (GET /v1/transfers?metadata[order]=...), whatever became of them,
// and whatever the lookup finds carries that order id (the list is the sender's own). An order id may name more than
// one transfer: a client that sent its request again under a new key made a second one.
import type { World } from './world';

/** At most this many lookups at the end: each is one request. */
const LOOKUPS_MAX = 300;

export async function metadataChecks(world: World): Promise<void> {
  const byOrder = new Map<string, { client: number; order: string; ids: Set<string> }>();
  for (const { client, order, id } of world.ordered) {
    const key = `${client}:${order}`;
    const known = byOrder.get(key) ?? { client, order, ids: new Set<string>() };
    known.ids.add(id);
    byOrder.set(key, known);
  }
  for (const { client, order, ids } of [...byOrder.values()].slice(0, LOOKUPS_MAX)) {
    const member = world.members[client];
    const answer = await world.http.read(client, `/v1/transfers?metadata[order]=${encodeURIComponent(order)}&limit=50`, { token: member.key });
    const found: Array<{ transfer_id: string; metadata?: Record<string, string> }> | null = typeof answer === 'string' || answer.status !== 200 ? null : answer.body?.data ?? [];
    const foundIds = new Set((found ?? []).map((t) => t.transfer_id));
    world.findings.expect(found !== null && [...ids].every((id) => foundIds.has(id)) && found.every((t) => t.metadata?.order === order),
      'transfers are found again by their metadata, and the lookup finds nothing else',
      () => `c${client} order ${order}: made ${[...ids].join(', ')}, found ${JSON.stringify(found ?? answer).slice(0, 400)}`, [client]);
  }
}
