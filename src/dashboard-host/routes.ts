// The browser dashboard (src/dashboard, built into dist/dashboard by scripts/build-dashboard.mjs),
// served by the api role at /dashboard, same origin as the API it calls. Its page may run only
// its own script and style (a Content-Security-Policy without inline script or style); the page
// is never cached, the assets (named by their content's hash) for good.
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import type Koa from 'koa';

export const DASHBOARD_PATH = '/dashboard';

/**
 * The service's icon: a browser asks for /favicon.ico on any page that names none, and reports the
 * 404 as an error. The dashboard's page names this one (scripts/build-dashboard.mjs).
 */
export const ICON_SVG = '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 16 16"><circle cx="8" cy="8" r="7" fill="#1d4ed8"/><path d="M5 8h6M8 5v6" stroke="#fff" stroke-width="2"/></svg>';
const DEFAULT_DIR = path.join(__dirname, '..', '..', 'dashboard');

export const DASHBOARD_CSP = [
  "default-src 'none'", "script-src 'self'", "style-src 'self'", "connect-src 'self'", "img-src 'self' data:",
  "base-uri 'none'", "form-action 'self'", "frame-ancestors 'none'",
].join('; ');

const TYPES: Record<string, string> = { '.js': 'text/javascript; charset=utf-8', '.css': 'text/css; charset=utf-8' };

interface Built { page: string; assets: Map<string, { body: Buffer; type: string }> }

function load(dir: string): Built | null {
  if (!existsSync(path.join(dir, 'index.html'))) return null;
  const assets = new Map<string, { body: Buffer; type: string }>();
  for (const name of readdirSync(path.join(dir, 'assets'))) {
    const type = TYPES[path.extname(name)];
    if (type) assets.set(name, { body: readFileSync(path.join(dir, 'assets', name)), type });
  }
  return { page: readFileSync(path.join(dir, 'index.html'), 'utf8'), assets };
}

/** Serves /dashboard and its assets; every other path goes on to the API. */
export function dashboardMiddleware(dir = DEFAULT_DIR): Koa.Middleware {
  let built: Built | null | undefined;
  return async (ctx, next) => {
    if (ctx.path === '/favicon.ico' && (ctx.method === 'GET' || ctx.method === 'HEAD')) {
      ctx.set('Cache-Control', 'public, max-age=86400');
      ctx.type = 'image/svg+xml';
      ctx.body = ICON_SVG;
      return undefined;
    }
    if (ctx.path !== DASHBOARD_PATH && !ctx.path.startsWith(`${DASHBOARD_PATH}/`)) return next();
    built ??= load(dir);
    ctx.set('Content-Security-Policy', DASHBOARD_CSP);
    ctx.set('X-Content-Type-Options', 'nosniff');
    ctx.set('Referrer-Policy', 'no-referrer');
    if (ctx.method !== 'GET' && ctx.method !== 'HEAD') {
      ctx.status = 405;
      ctx.set('Allow', 'GET, HEAD');
      return undefined;
    }
    if (!built) {
      ctx.status = 503;
      ctx.type = 'text/plain';
      ctx.body = 'the dashboard is not built: run npm run build';
      return undefined;
    }
    const rest = ctx.path.slice(DASHBOARD_PATH.length);
    if (rest === '' || rest === '/') {
      ctx.set('Cache-Control', 'no-store');
      ctx.type = 'text/html; charset=utf-8';
      ctx.body = built.page;
      return undefined;
    }
    const asset = rest.startsWith('/assets/') ? built.assets.get(rest.slice('/assets/'.length)) : undefined;
    if (!asset) {
      ctx.status = 404;
      ctx.type = 'text/plain';
      ctx.body = 'not found';
      return undefined;
    }
    ctx.set('Cache-Control', 'public, max-age=31536000, immutable');
    ctx.type = asset.type;
    ctx.body = asset.body;
    return undefined;
  };
}
