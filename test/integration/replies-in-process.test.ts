// The ledger's reply to a waiting request (DESIGN.md section 5f): handed over in memory when the
// ledger runs in the API's own process (src/kafka/local-replies.ts), through ledger.replies when
// the API is another process. Both answer the POST with the ledger's decision.
import assert from 'node:assert/strict';
import { TOPICS } from '../../src/kafka/topics';
import { testService } from '../hooks';
import { signUp } from '../support/accounts';
import { balances, fund, transfer } from '../support/money';
import { startApi, stopApi } from '../support/api-process';

/** How many messages ledger.replies holds in this namespace. */
async function repliesInTopic(): Promise<number> {
  const { admin, names } = testService().runtime;
  const offsets = await admin.fetchTopicOffsets(names.full(TOPICS.ledgerReplies));
  return offsets.reduce((sum, o) => sum + Number(o.high), 0);
}

describe('ledger replies', () => {
  const base = () => testService().baseUrl;

  it('answers a request waiting in the ledger\'s own process in memory: 201 with the decision, nothing on ledger.replies', async () => {
    const [sender, recipient] = await Promise.all([signUp(base()), signUp(base())]);
    await fund(base(), sender.key, 'EUR', '10.00');
    const before = await repliesInTopic();
    for (const amount of ['1.00', '2.00', '3.00']) {
      const answer = await transfer(base(), sender.key, { recipient_email: recipient.account.email, amount, currency: 'EUR' });
      assert.equal(answer.status, 201, JSON.stringify(answer.body));
      assert.equal(answer.body.status, 'completed');
    }
    const refused = await transfer(base(), sender.key, { recipient_email: recipient.account.email, amount: '5.00', currency: 'EUR' });
    assert.equal(refused.status, 422, 'a refusal is a decision too');
    assert.equal(refused.body.error, 'insufficient_funds');
    assert.equal(await repliesInTopic(), before, 'no reply crossed Kafka');
  });

  it('answers a request waiting in another process through ledger.replies', async () => {
    const api = await startApi();
    try {
      const [sender, recipient] = await Promise.all([signUp(api.url), signUp(api.url)]);
      await fund(api.url, sender.key, 'EUR', '10.00');
      const before = await repliesInTopic();
      const answer = await transfer(api.url, sender.key, { recipient_email: recipient.account.email, amount: '4.00', currency: 'EUR' });
      assert.equal(answer.status, 201, JSON.stringify(answer.body));
      assert.equal(answer.body.status, 'completed');
      assert.equal(await repliesInTopic(), before + 1, 'the reply crossed Kafka');
      assert.equal((await balances(api.url, recipient.token)).EUR.available, '4.00');
    } finally {
      await stopApi(api);
    }
  });
});
