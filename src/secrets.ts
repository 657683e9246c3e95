// The process's secrets (issue 38): no secret has a value written in the code. A process that
// listens beyond loopback, or serves the live environment, must be given each of its own; one
// on loopback (tests, `npm start`) that is not given one makes a strong one for itself.
// `npm start` and the Docker setup generate them once and keep them (scripts/secrets.sh), so a
// restart and every role process use the same ones: data sealed with PARTNER_TOKEN_SECRET or
// WEBHOOK_SECRET_KEY cannot be opened with another.
import { randomBytes } from 'node:crypto';
import { isIP } from 'node:net';
import { log } from './log';

export const SECRET_NAMES = ['MASTER_KEY', 'JWT_SECRET', 'PARTNER_CLIENT_SECRET', 'PARTNER_TOKEN_SECRET', 'WEBHOOK_SECRET_KEY', 'MOCK_RAILS_CONTROL_SECRET'] as const;
export type SecretName = (typeof SECRET_NAMES)[number];
export type Secrets = Record<SecretName, string>;

// Values earlier versions used when a setting was missing: published, so never accepted where
// a network can reach the process.
const PUBLISHED_DEFAULTS = new Set([
  'mk_sandbox_local_master_key_change_me', 'local-development-jwt-secret-change-me-32b', 'sandbox-orchestrator-secret',
  'local-development-partner-token-secret-change-me', 'local-development-webhook-secret-key-change-me',
]);

/** True for an address only this machine reaches: 127.0.0.0/8, ::1, localhost. */
export function isLoopback(host: string): boolean {
  const bare = host.replace(/^\[|\]$/g, '').toLowerCase();
  if (bare === 'localhost') return true;
  if (isIP(bare) === 4) return bare.startsWith('127.');
  if (bare.startsWith('::ffff:')) return isLoopback(bare.slice('::ffff:'.length));
  return bare === '::1';
}

/** A strong secret: 32 random bytes, base64url; the master key keeps its `mk_` prefix. */
export function generateSecret(name: SecretName): string {
  const random = randomBytes(32).toString('base64url');
  return name === 'MASTER_KEY' ? `mk_${random}` : random;
}

// Generated once per process, so every role and every config this process loads agree.
const generated = new Map<SecretName, string>();

export interface SecretContext {
  host: string;
  environment: string;
  roles: readonly string[];
}

/** The secrets a process with these roles needs: the rails' controls only where they are served or called. */
function needed({ environment, roles }: SecretContext): SecretName[] {
  const controls = roles.includes('mock-rails') || (roles.includes('api') && environment === 'sandbox');
  return SECRET_NAMES.filter((name) => name !== 'MOCK_RAILS_CONTROL_SECRET' || controls);
}

/**
 * Each secret from the environment; on loopback, a generated one for those not set.
 * @throws Error naming every missing (or published) secret, for a reachable or live process
 */
export function resolveSecrets(env: NodeJS.ProcessEnv, context: SecretContext): Secrets {
  const reachable = !isLoopback(context.host);
  const strict = reachable || context.environment === 'live';
  if (strict) {
    const missing = needed(context).filter((name) => !env[name]);
    const published = needed(context).filter((name) => env[name] && PUBLISHED_DEFAULTS.has(env[name]!));
    if (missing.length > 0 || published.length > 0) {
      const where = reachable ? `listens on ${context.host}, beyond loopback` : 'serves the live environment';
      const problems = [
        ...missing.map((name) => `${name} is not set`),
        ...published.map((name) => `${name} is a published default value`),
      ];
      throw new Error(`this process ${where} and needs secrets of its own: ${problems.join('; ')}. `
        + 'Generate each with `openssl rand -base64 32` (npm start and docker compose do it for you: see the README, "Secrets").');
    }
  }
  const made: SecretName[] = [];
  const secrets = {} as Secrets;
  for (const name of SECRET_NAMES) {
    const given = env[name];
    if (given) {
      secrets[name] = given;
      continue;
    }
    let value = generated.get(name);
    if (value === undefined) {
      value = generateSecret(name);
      generated.set(name, value);
      made.push(name);
    }
    secrets[name] = value;
  }
  // A strict process was given every secret it uses; one it does not use is made silently.
  if (made.length > 0 && !strict) {
    log.warn({ secrets: made }, 'secrets generated for this process only: they end with it (sessions, sealed partner tokens and webhook secrets made now cannot be used after a restart); npm start keeps its own');
  }
  return secrets;
}
