// Request-log redaction (src/request-logs/recorder.ts): secret-bearing fields are replaced at
// any depth, whatever their case; everything else is logged exactly as sent.
import assert from 'node:assert/strict';
import { redactedJson } from '../../src/request-logs/body-text';

describe('request-log redaction', () => {
  const table: Array<[why: string, body: unknown, logged: string | null]> = [
    ['no body', undefined, null],
    ['a body without secrets, as it is', { email: 'a@example.com', amount: '1.00', api_key_id: 'k1' }, '{"email":"a@example.com","amount":"1.00","api_key_id":"k1"}'],
    ['a password', { email: 'a@example.com', password: 'hunter2' }, '{"email":"a@example.com","password":"[redacted]"}'],
    ['a key in the response, nested in an array', { data: [{ id: 'k1', key: 'sk_sandbox_x' }] }, '{"data":[{"id":"k1","key":"[redacted]"}]}'],
    ['any case of the field name', { Token: 't', CLIENT_SECRET: 's' }, '{"Token":"[redacted]","CLIENT_SECRET":"[redacted]"}'],
    ['a whole object under a secret name', { secret: { a: 1 } }, '{"secret":"[redacted]"}'],
    ['a secret name inside a string value only', { note: 'my "password": is safe' }, '{"note":"my \\"password\\": is safe"}'],
  ];
  for (const [why, body, logged] of table) {
    it(why, () => {
      assert.equal(redactedJson(body), logged);
    });
  }
});
