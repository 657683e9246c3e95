// Process roles (DESIGN.md section 3): one codebase, one process per role or all in one.
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Role } from './config';
import { createApp, openGuards } from './http/app';
import { metaRoutes } from './http/meta';
import type { RouteDef } from './http/route';
import { log } from './log';
import type { Runtime } from './runtime';

export interface RunningRole {
  role: Role;
  /** Where an HTTP role listens. */
  url?: string;
  /** Stops taking new work, finishes what is in flight, commits offsets. */
  stop(): Promise<void>;
}

export function apiRoutes(runtime: Runtime): RouteDef[] {
  const routes: RouteDef[] = [];
  routes.push(...metaRoutes(runtime, () => routes));
  return routes;
}

function closeServer(server: Server, graceMs: number): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => { server.closeAllConnections(); }, graceMs);
    server.close(() => { clearTimeout(timer); resolve(); });
    server.closeIdleConnections();
  });
}

async function startApi(runtime: Runtime): Promise<RunningRole> {
  const app = createApp({ routes: apiRoutes(runtime), guards: openGuards, bodyLimitBytes: runtime.config.bodyLimitBytes });
  const server = app.listen(runtime.config.port, runtime.config.host);
  server.keepAliveTimeout = 65_000;
  await new Promise<void>((resolve, reject) => { server.once('listening', resolve); server.once('error', reject); });
  const { port } = server.address() as AddressInfo;
  const url = `http://${runtime.config.host}:${port}`;
  log.info({ url }, 'api listening');
  return { role: 'api', url, stop: () => closeServer(server, 10_000) };
}

const STARTERS: Record<Role, (runtime: Runtime) => Promise<RunningRole>> = {
  api: startApi,
};

export async function startRoles(runtime: Runtime, roles: Role[]): Promise<RunningRole[]> {
  const running: RunningRole[] = [];
  for (const role of roles) running.push(await STARTERS[role](runtime));
  return running;
}
