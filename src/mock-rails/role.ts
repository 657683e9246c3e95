// Runs the mock partner rails as a process role (DESIGN.md section 3, Roles).
import { log } from '../log';
import type { RunningRole, Runtime } from '../runtime';
import { PARTNER_LINK_CALLBACK_PATH } from '../partners/registry';
import { startMockRails, type MockRails } from './server';

export async function startMockRailsRole(runtime: Runtime): Promise<RunningRole & { rails: MockRails }> {
  const { config } = runtime;
  const rails = await startMockRails({
    databaseUrl: config.databaseUrl,
    host: config.host,
    port: config.mockRailsPort,
    tokenTtlSeconds: config.partnerTokenTtlSeconds,
    clientId: config.partnerClientId,
    clientSecret: config.partnerClientSecret,
    controlSecret: config.mockRailsControlSecret,
    // The authorization-code redirect lands on our API's callback (SPEC.md section 5); an API in
    // this process that takes a free port registers its own (src/roles/api.ts).
    redirectUris: [`${config.publicUrl ?? `http://${config.host}:${config.port}`}${PARTNER_LINK_CALLBACK_PATH}`],
    chainConfirmMs: config.chainConfirmMs,
    spuriousInvalidTokenRate: config.mockRailsInvalidTokenPerMille / 1000,
    claimTtlMs: config.mockRailsClaimTtlMs,
  });
  log.info({ url: rails.url }, 'mock rails listening');
  return { role: 'mock-rails', url: rails.url, stop: () => rails.stop(), rails };
}
