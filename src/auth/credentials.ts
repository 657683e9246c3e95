// API keys, passwords and session tokens: how they are made, stored and checked.
import { createHash, randomBytes, randomUUID, scrypt as scryptCallback, timingSafeEqual } from 'node:crypto';
import { promisify } from 'node:util';
import { SignJWT, jwtVerify, errors as joseErrors } from 'jose';
import { DomainError } from '../domain-error';
import type { Environment } from '../config';
import { wallNow } from '../clock';

const scrypt = promisify(scryptCallback) as (password: string, salt: Buffer, keylen: number, options: { N: number; r: number; p: number }) => Promise<Buffer>;

export type KeyType = 'secret' | 'publishable' | 'restricted';
export const KEY_TYPES: readonly KeyType[] = ['secret', 'publishable', 'restricted'];
const KEY_PREFIX: Record<KeyType, string> = { secret: 'sk', publishable: 'pk', restricted: 'rk' };
const KEY_TYPE_BY_PREFIX: Record<string, KeyType> = { sk: 'secret', pk: 'publishable', rk: 'restricted' };
const KEY_PATTERN = /^(sk|pk|rk)_(sandbox|live)_([A-Za-z0-9]{32})$/;
const BASE62 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

export interface NewKey {
  key: string;
  hash: string;
  hint: string;
}

/** A new API key: `<sk|pk|rk>_<environment>_<32 base62 characters>` (about 190 bits). */
export function generateApiKey(type: KeyType, environment: Environment): NewKey {
  const bytes = randomBytes(32);
  let body = '';
  for (const byte of bytes) body += BASE62[byte % 62]; // 256 % 62 bias is negligible at 190 bits
  const key = `${KEY_PREFIX[type]}_${environment}_${body}`;
  return { key, hash: hashApiKey(key), hint: `${key.slice(0, KEY_PREFIX[type].length + environment.length + 2)}…${body.slice(-4)}` };
}

/** The SHA-256 digest of a credential: API keys are stored and looked up by it (hex). */
export function credentialDigest(credential: string): Buffer {
  return createHash('sha256').update(credential).digest();
}

export function hashApiKey(key: string): string {
  return credentialDigest(key).toString('hex');
}

export interface ParsedKey {
  type: KeyType;
  environment: Environment;
}

/** Recognises the shape of an API key; null when the text is not one. */
export function parseApiKey(token: string): ParsedKey | null {
  const match = KEY_PATTERN.exec(token);
  if (!match) return null;
  return { type: KEY_TYPE_BY_PREFIX[match[1]], environment: match[2] as Environment };
}

/**
 * The environment a key's prefix names (`sk_live_...` → live), whatever follows it: SPEC.md
 * section 5 makes the prefix alone decide environment_mismatch. Null when no environment is named.
 */
export function keyEnvironment(token: string): Environment | null {
  const match = /^(?:sk|pk|rk)_(sandbox|live)_/.exec(token);
  return match ? (match[1] as Environment) : null;
}

export function looksLikeApiKey(token: string): boolean {
  return /^(sk|pk|rk)_/.test(token);
}

const SCRYPT_BLOCK = { r: 8, p: 1 };

/** A password's scrypt hash of cost `cost` (N), the cost and salt stored beside it. */
export async function hashPassword(password: string, cost: number): Promise<string> {
  const salt = randomBytes(16);
  const derived = await scrypt(password, salt, 32, { N: cost, ...SCRYPT_BLOCK });
  return `scrypt$${cost}$${SCRYPT_BLOCK.r}$${SCRYPT_BLOCK.p}$${salt.toString('base64')}$${derived.toString('base64')}`;
}

/** Checked when the email is unknown, at the cost of new hashes, so both failures cost the same time. */
const dummyHash = (cost: number) => `scrypt$${cost}$${SCRYPT_BLOCK.r}$${SCRYPT_BLOCK.p}$AAAAAAAAAAAAAAAAAAAAAA==$AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=`;

export async function verifyPassword(password: string, stored: string | null, cost: number): Promise<boolean> {
  const [scheme, n, r, p, salt, hash] = (stored ?? dummyHash(cost)).split('$');
  if (scheme !== 'scrypt') return false;
  const expected = Buffer.from(hash, 'base64');
  const derived = await scrypt(password, Buffer.from(salt, 'base64'), expected.length, { N: Number(n), r: Number(r), p: Number(p) });
  return stored !== null && timingSafeEqual(derived, expected);
}

/** Compares two credential digests in constant time (digests have one length whatever the input). */
export function digestsEqual(left: Buffer, right: Buffer): boolean {
  return timingSafeEqual(left, right);
}

export interface SessionClaims {
  accountId: string;
  environment: Environment;
  /** The session's own id (`jti`): what a sign-out revokes. */
  sessionId: string;
  /** When the token expires (`exp`, seconds since the epoch). */
  expiresAt: number;
}

/** Who issues session tokens and for whom (`iss`, `aud`): a token of another issuer or meant for another audience is refused. */
export const SESSION_ISSUER = 'payments-api';
export const SESSION_AUDIENCE = 'payments-dashboard';

export class SessionTokens {
  private readonly secret: Uint8Array;

  constructor(secret: string, private readonly ttlSeconds: number, private readonly environment: Environment) {
    this.secret = new TextEncoder().encode(secret);
  }

  async issue(accountId: string, now = wallNow()): Promise<{ token: string; expires_at: string }> {
    const issuedAt = Math.floor(now.getTime() / 1000);
    const expiresAt = issuedAt + this.ttlSeconds;
    const token = await new SignJWT({ env: this.environment })
      .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
      .setSubject(accountId)
      .setIssuer(SESSION_ISSUER)
      .setAudience(SESSION_AUDIENCE)
      .setJti(randomUUID())
      .setIssuedAt(issuedAt)
      .setExpirationTime(expiresAt)
      .sign(this.secret);
    return { token, expires_at: new Date(expiresAt * 1000).toISOString() };
  }

  /** @throws DomainError token_expired | invalid_token | environment_mismatch */
  async verify(token: string): Promise<SessionClaims> {
    try {
      const { payload } = await jwtVerify(token, this.secret, {
        algorithms: ['HS256'], issuer: SESSION_ISSUER, audience: SESSION_AUDIENCE, requiredClaims: ['sub', 'exp', 'jti'],
      });
      if (payload.env !== this.environment) {
        throw new DomainError('environment_mismatch', `this session belongs to the ${String(payload.env)} environment; this server is ${this.environment}`);
      }
      return { accountId: payload.sub!, environment: this.environment, sessionId: payload.jti!, expiresAt: payload.exp! };
    } catch (error) {
      if (error instanceof DomainError) throw error;
      if (error instanceof joseErrors.JWTExpired) throw new DomainError('token_expired', 'the session token has expired; sign in again');
      throw new DomainError('invalid_token', 'the session token is malformed, has an invalid signature or uses an unsupported algorithm');
    }
  }
}
