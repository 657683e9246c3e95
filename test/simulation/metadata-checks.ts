// The end check of metadata (DESIGN.md section 5h): each transfer made with an order id in its
// metadata is found again by it, alone (GET /v1/transfers?metadata[order]=...), whatever became of
// it, and a transfer made without one never answers to it.
import type { World } from './world';

/** At most this many lookups at the end: each is one request. */
const LOOKUPS_MAX = 300;

export async function metadataChecks(world: World): Promise<void> {
  for (const { client, order, id } of world.ordered.slice(0, LOOKUPS_MAX)) {
    const member = world.members[client];
    const answer = await world.http.read(client, `/v1/transfers?metadata[order]=${encodeURIComponent(order)}&limit=10`, { token: member.key });
    const found = typeof answer === 'string' || answer.status !== 200 ? answer : (answer.body?.data ?? []).map((t: { transfer_id: string }) => t.transfer_id);
    world.findings.expect(Array.isArray(found) && found.length === 1 && found[0] === id, 'a transfer is found again by its metadata, alone',
      () => `c${client} order ${order}: transfer ${id}, found ${JSON.stringify(found).slice(0, 300)}`, [client]);
  }
}
