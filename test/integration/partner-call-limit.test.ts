// A partner that stops answering within our timeout is sent fewer calls at once
// (src/partners/call-limit.ts): the calls in flight halve for each wave of timeouts, not for each
// call of a wave, and climb back one at a time as it answers again. The rail's `down` control
// holds every /v1 call of the partner past the client's timeout until it is ended.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { PartnerClient } from '../../src/partners/client';
import { isPartnerError } from '../../src/partners/errors';
import { railsUrl, testService } from '../hooks';
import { call } from '../support/http';
import { controlHeaders } from '../support/secrets';

const CAP = 16;

describe('calls in flight to a partner that stops answering', function () {
  this.timeout(60_000);

  it('halve once per wave of timeouts, and climb back to the cap as the partner answers in time', async () => {
    const { config } = testService();
    const client = new PartnerClient({
      baseUrl: `${railsUrl()}/fiat`, clientId: config.partnerClientId, clientSecret: config.partnerClientSecret,
      timeoutMs: 300, attemptsMax: 1, backoffMsMax: 100, callsInFlightMax: CAP,
    });
    const lookUp = () => client.findPaymentByReference(randomUUID());
    assert.equal(await lookUp(), null, 'a reference the partner never saw');
    assert.equal(client.callsInFlightLimit, CAP);

    const down = await call(`${railsUrl()}/fiat`, 'POST', '/_control/down?seconds=30', undefined, { headers: controlHeaders() });
    assert.equal(down.status, 200, JSON.stringify(down.body));
    const first = await Promise.allSettled(Array.from({ length: CAP }, lookUp));
    assert.ok(first.every((r) => r.status === 'rejected' && isPartnerError(r.reason) && r.reason.kind === 'unavailable'), 'every call of the wave timed out');
    assert.equal(client.callsInFlightLimit, CAP / 2, 'sixteen timeouts of one wave halve it once');
    // The next sixteen go out eight at a time; each wave that times out halves it again.
    await Promise.allSettled(Array.from({ length: CAP }, lookUp));
    assert.ok(client.callsInFlightLimit <= CAP / 4, `still timing out, it fell further: ${client.callsInFlightLimit}`);
    assert.ok(client.callsInFlightLimit >= 1);

    // The partner answers again: its outage ended by the control rather than waited out.
    const up = await call(`${railsUrl()}/fiat`, 'POST', '/_control/down?seconds=0', undefined, { headers: controlHeaders() });
    assert.equal(up.status, 200, JSON.stringify(up.body));
    const low = client.callsInFlightLimit;
    let answered = 0;
    while (client.callsInFlightLimit < CAP && answered < 1_000) {
      await Promise.all(Array.from({ length: 4 }, async () => { assert.equal(await lookUp(), null); answered += 1; }));
    }
    assert.equal(client.callsInFlightLimit, CAP, `back to the cap after ${answered} answers in time`);
    // From `low` to the cap one step per limit's worth of answers: about the sum of the limits passed.
    let needed = 0;
    for (let n = low; n < CAP; n++) needed += n;
    assert.ok(answered >= needed - 4 && answered <= needed + 8, `${answered} answers raised it from ${low}; the rule needs about ${needed}`);
  });
});
