// Secrets at rest: a customer's partner tokens (DESIGN.md section 5c) let anyone who reads them
// move that customer's money, and a webhook signing secret lets anyone forge our events, so the
// database holds them only sealed with AES-256-GCM under a key of this service's settings, one
// key per purpose. A sealed text names its format version, so the key or the cipher can change
// later without guessing.
import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';

const VERSION = 'v1';
// The full 128-bit GCM tag, on sealing and required on opening: a decipher left to take the tag
// it is given would accept a truncated one (down to 4 bytes), which a forger guesses far sooner.
const TAG_BYTES = 16;

export type VaultPurpose = 'partner-token-vault' | 'webhook-secret-vault';

export class SecretVault {
  private readonly key: Buffer;

  /** `secret`: any string of the settings; the cipher key is the SHA-256 of it and the purpose. */
  constructor(secret: string, purpose: VaultPurpose) {
    this.key = createHash('sha256').update(`${purpose}:${secret}`).digest();
  }

  seal(plain: string): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv, { authTagLength: TAG_BYTES });
    const sealed = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
    return [VERSION, iv.toString('base64url'), cipher.getAuthTag().toString('base64url'), sealed.toString('base64url')].join('.');
  }

  /** @throws when the text was not sealed by this key (tampered, or another key). */
  open(sealed: string): string {
    const [version, iv, tag, body] = sealed.split('.');
    if (version !== VERSION || !iv || !tag || body === undefined) throw new Error('not a sealed secret');
    const tagBytes = Buffer.from(tag, 'base64url');
    if (tagBytes.length !== TAG_BYTES) throw new Error('not a sealed secret');
    const decipher = createDecipheriv('aes-256-gcm', this.key, Buffer.from(iv, 'base64url'), { authTagLength: TAG_BYTES });
    decipher.setAuthTag(tagBytes);
    return Buffer.concat([decipher.update(Buffer.from(body, 'base64url')), decipher.final()]).toString('utf8');
  }
}
