// Webhook signatures and the retry schedule (DESIGN.md section 5d): the signature matches the
// Standard Webhooks specification's own example, so any of its libraries verifies our deliveries;
// a rotation signs with both secrets; Retry-After in both forms is honoured within bounds; the
// default schedule is DESIGN.md's.
import assert from 'node:assert/strict';
import { loadConfig } from '../../src/config';
import { retryAfterMs, retryDelayMs } from '../../src/webhooks/schedule';
import { sign, signatureHeaders } from '../../src/webhooks/signing';

describe('webhook signing and schedule', () => {
  it('signs as the Standard Webhooks specification\'s example does', () => {
    assert.equal(sign('whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw', 'msg_p5jXN8AQM9LWM0D4loKWxJek', 1614265330, '{"test": 2432232314}'),
      'v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=');
  });

  it('gives one signature per secret, space-separated, and the id and timestamp headers', () => {
    const secrets = ['whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw', 'whsec_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA='];
    const headers = signatureHeaders(secrets, 'evt_1', 1700000000, '{}');
    assert.equal(headers['webhook-id'], 'evt_1');
    assert.equal(headers['webhook-timestamp'], '1700000000');
    assert.deepEqual(headers['webhook-signature'].split(' '), secrets.map((s) => sign(s, 'evt_1', 1700000000, '{}')));
    assert.notEqual(sign(secrets[0], 'evt_1', 1700000001, '{}'), sign(secrets[0], 'evt_1', 1700000000, '{}'), 'the timestamp is signed');
  });

  it('reads Retry-After as seconds or an HTTP date, bounded to 1 s .. 10 h, and ignores nonsense', () => {
    const now = new Date('2026-11-23T12:00:00Z');
    assert.equal(retryAfterMs('30', now), 30_000);
    assert.equal(retryAfterMs('0', now), 1_000);
    assert.equal(retryAfterMs('999999', now), 36_000_000);
    assert.equal(retryAfterMs('Mon, 23 Nov 2026 12:02:00 GMT', now), 120_000);
    assert.equal(retryAfterMs('soon', now), null);
    assert.equal(retryAfterMs(undefined, now), null);
  });

  it('follows DESIGN.md\'s schedule, then gives up; a Retry-After replaces the step', () => {
    const schedule = loadConfig({}).webhookRetryScheduleMs;
    assert.deepEqual(schedule, [5_000, 300_000, 1_800_000, 7_200_000, 18_000_000, 36_000_000, 36_000_000]);
    assert.deepEqual([1, 2, 7, 8].map((attempt) => retryDelayMs(attempt, schedule, null)), [5_000, 300_000, 36_000_000, null]);
    assert.equal(retryDelayMs(2, schedule, 60_000), 60_000);
    assert.equal(retryDelayMs(8, schedule, 60_000), null, 'no attempt is left, whatever the receiver asks');
    assert.throws(() => loadConfig({ WEBHOOK_RETRY_SCHEDULE_MS: '5s,1m' }), /comma-separated list of milliseconds/);
  });
});
