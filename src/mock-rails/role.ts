// Runs the mock partner rails as a process role (DESIGN.md section 3, Roles).
import { log } from '../log';
import type { RunningRole, Runtime } from '../runtime';
import { startMockRails } from './server';

export async function startMockRailsRole(runtime: Runtime): Promise<RunningRole> {
  const { config } = runtime;
  const rails = await startMockRails({
    host: config.host,
    port: config.mockRailsPort,
    tokenTtlSeconds: config.partnerTokenTtlSeconds,
    clientId: config.partnerClientId,
    clientSecret: config.partnerClientSecret,
    // The authorization-code redirect lands on our API's callback (SPEC.md section 5).
    redirectUris: [`http://${config.host}:${config.port}/v1/partners/oauth/callback`],
    chainConfirmMs: config.chainConfirmMs,
    spuriousInvalidTokenRate: config.mockRailsInvalidTokenPerMille / 1000,
  });
  log.info({ url: rails.url }, 'mock rails listening');
  return { role: 'mock-rails', url: rails.url, stop: () => rails.stop() };
}
