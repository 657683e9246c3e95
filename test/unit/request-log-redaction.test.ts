// Request-log redaction (src/request-logs/recorder.ts): secret-bearing fields are replaced at
// any depth, whatever their case; everything else is logged exactly as sent.
import assert from 'node:assert/strict';
import { redactedJson } from '../../src/request-logs/body-text';
import { keptAnswer, redactedQuery } from '../../src/redaction';

describe('request-log redaction', () => {
  const table: Array<[why: string, body: unknown, logged: string | null]> = [
    ['no body', undefined, null],
    ['a body without secrets, as it is', { email: 'a@example.com', amount: '1.00', api_key_id: 'k1' }, '{"email":"a@example.com","amount":"1.00","api_key_id":"k1"}'],
    ['a password', { email: 'a@example.com', password: 'hunter2' }, '{"email":"a@example.com","password":"[redacted]"}'],
    ['a key in the response, nested in an array', { data: [{ id: 'k1', key: 'sk_sandbox_x' }] }, '{"data":[{"id":"k1","key":"[redacted]"}]}'],
    ['any case of the field name', { Token: 't', CLIENT_SECRET: 's' }, '{"Token":"[redacted]","CLIENT_SECRET":"[redacted]"}'],
    ['a whole object under a secret name', { secret: { a: 1 } }, '{"secret":"[redacted]"}'],
    ['a secret name inside a string value only', { note: 'my "password": is safe' }, '{"note":"my \\"password\\": is safe"}'],
    ['a webhook signing secret', { id: 'w1', secret: 'whsec_abc' }, '{"id":"w1","secret":"[redacted]"}'],
    ['the OAuth state of a consent URL, the rest of it as it is', { authorize_url: 'https://p.example/authorize?client_id=c&state=s3cr3t&response_type=code' },
      '{"authorize_url":"https://p.example/authorize?client_id=c&state=%5Bredacted%5D&response_type=code"}'],
    ['a token in any URL\'s query', { url: 'https://example.com/hooks?token=t0k&x=1' }, '{"url":"https://example.com/hooks?token=%5Bredacted%5D&x=1"}'],
  ];
  for (const [why, body, logged] of table) {
    it(why, () => {
      assert.equal(redactedJson(body), logged);
    });
  }

  it('redacts the secret parameters of a logged query (the partner\'s redirect)', () => {
    assert.equal(redactedQuery('state=abc&code=xyz&other=1'), 'state=%5Bredacted%5D&code=%5Bredacted%5D&other=1');
    assert.equal(redactedQuery('limit=10&status=4xx'), 'limit=10&status=4xx');
  });

  it('keeps an answer with its secrets redacted: an API key under `key`, never an operator\'s message key', () => {
    assert.deepEqual(keptAnswer({ id: 'k1', key: 'sk_sandbox_abc' }), { json: '{"id":"k1","key":"[redacted]"}', body: { id: 'k1', key: '[redacted]' }, redacted: true });
    const message = { id: 'm1', key: 'account-42' };
    assert.deepEqual(keptAnswer(message), { json: '{"id":"m1","key":"account-42"}', body: message, redacted: false });
    assert.deepEqual(keptAnswer(null), { json: 'null', body: null, redacted: false });
  });
});
