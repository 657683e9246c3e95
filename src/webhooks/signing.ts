// Standard Webhooks signatures (https://www.standardwebhooks.com): `webhook-id`, the event id, the
// same on every attempt; `webhook-timestamp`, the attempt's Unix seconds; `webhook-signature`,
// `v1,` + base64 HMAC-SHA256 of `id.timestamp.body` under the secret's bytes (the base64 after
// `whsec_`), one per signing secret, space-separated, so a receiver mid-rotation accepts either.
import { createHmac } from 'node:crypto';

const SECRET_PREFIX = 'whsec_';

export function sign(secret: string, id: string, timestamp: number, body: string): string {
  const key = Buffer.from(secret.slice(SECRET_PREFIX.length), 'base64');
  return `v1,${createHmac('sha256', key).update(`${id}.${timestamp}.${body}`).digest('base64')}`;
}

export function signatureHeaders(secrets: string[], id: string, timestamp: number, body: string): Record<string, string> {
  return {
    'webhook-id': id,
    'webhook-timestamp': String(timestamp),
    'webhook-signature': secrets.map((secret) => sign(secret, id, timestamp, body)).join(' '),
  };
}
