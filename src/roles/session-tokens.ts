// The session tokens of a process: the API's account routes issue them, its guards check them.
import { SessionTokens } from '../auth/credentials';
import type { Runtime } from '../runtime';

export function sessionTokens(runtime: Runtime): SessionTokens {
  const { jwtSecret, sessionTtlSeconds, environment } = runtime.config;
  return new SessionTokens(jwtSecret, sessionTtlSeconds, environment);
}
