// The test processes' secrets (and credential-attempt limits and password cost, below): generated once per test
// process, as the service generates its own on loopback, but put in the environment first, so that
// the service this process starts, the rails tests start beside it and the role processes they
// spawn all share them (a webhook secret sealed by one is opened by another).
import { generateSecret, SECRET_NAMES } from '../../src/secrets';

for (const name of SECRET_NAMES) process.env[name] ||= generateSecret(name);

// Every test signs up from 127.0.0.1, many times a second: the credential attempts of one
// address are limited far above that here (the default is 1 a second, 20 at once); the tests of
// those limits start a service of their own with the defaults (sign-in-limits.test.ts).
process.env.ATTEMPT_RATE_LIMIT_RPS ||= '1000';
process.env.ATTEMPT_RATE_LIMIT_BURST ||= '1000';
// Hundreds of sign-ups a run: password hashes at scrypt's lowest cost the service takes (a
// sandbox setting), not the default's sixteen times that work.
process.env.PASSWORD_HASH_COST ||= '1024';

/** The mock rails' control secret (`/<slug>/_control/...` routes). */
export const controlSecret = (): string => process.env.MOCK_RAILS_CONTROL_SECRET!;

/** Headers of a call to a rails control route. */
export const controlHeaders = (): Record<string, string> => ({ authorization: `Bearer ${controlSecret()}` });
