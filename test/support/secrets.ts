// The test processes' secrets: generated once per test process, as the service generates its
// own on loopback, but put in the environment first, so that the service this process starts, the
// rails tests start beside it and the role processes they spawn all share them (a webhook secret
// sealed by one is opened by another).
import { generateSecret, SECRET_NAMES } from '../../src/secrets';

for (const name of SECRET_NAMES) process.env[name] ||= generateSecret(name);

/** The mock rails' control secret (`/<slug>/_control/...` routes). */
export const controlSecret = (): string => process.env.MOCK_RAILS_CONTROL_SECRET!;

/** Headers of a call to a rails control route. */
export const controlHeaders = (): Record<string, string> => ({ authorization: `Bearer ${controlSecret()}` });
