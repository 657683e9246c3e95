// Deleting a run's keys straight in Redis: tests that play "Redis lost its keys", and benchmarks
// clearing what their run left behind.
import assert from 'node:assert/strict';
import Redis from 'ioredis';

/** SCAN rounds before giving up: 10 000 rounds of 1 000 keys is far more than any run writes. */
const SCAN_ROUNDS_MAX = 10_000;
const SCAN_COUNT = 1_000;

/** Deletes every key of `redisUrl` that starts with `prefix` (a run's own, never empty); returns how many. */
export async function deleteKeysStartingWith(redisUrl: string, prefix: string): Promise<number> {
  assert.ok(prefix.length > 0, 'only a run\'s own keys are deleted, under its prefix');
  const redis = new Redis(redisUrl, { lazyConnect: true, maxRetriesPerRequest: 1 });
  await redis.connect();
  let deleted = 0;
  try {
    let cursor = '0';
    for (let round = 0; round < SCAN_ROUNDS_MAX; round++) {
      const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', SCAN_COUNT);
      if (keys.length > 0) deleted += await redis.del(...keys);
      cursor = next;
      if (cursor === '0') return deleted;
    }
    throw new Error(`SCAN did not finish in ${SCAN_ROUNDS_MAX} rounds`);
  } finally {
    redis.disconnect();
  }
}
