// Process entry point: `node dist/src/main.js` runs the roles named in ROLES (default: all).
import { loadConfig } from './config';
import { log } from './log';
import { startRoles } from './roles';
import { openRuntime } from './runtime';

async function main(): Promise<void> {
  const config = loadConfig();
  const runtime = await openRuntime(config);
  const running = await startRoles(runtime, config.roles);
  log.info({ roles: config.roles, environment: config.environment }, 'service started');

  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    log.info({ signal }, 'shutting down: draining in-flight work');
    // Stop in reverse start order: the API stops accepting first, consumers commit last.
    for (const role of [...running].reverse()) {
      await role.stop().catch((error) => log.error({ err: error, role: role.role }, 'role did not stop cleanly'));
    }
    await runtime.close();
    log.info('stopped');
    process.exit(0);
  };
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  process.on('SIGINT', () => void shutdown('SIGINT'));
}

main().catch((error) => {
  log.fatal({ err: error }, 'failed to start');
  process.exit(1);
});
