// Health, readiness and the machine-readable API description.
import type { Runtime } from '../runtime';
import { checkReadiness, type ReadinessReport } from '../runtime';
import { openApiDocument } from '../http/openapi';
import type { RouteDef } from '../http/route';
import { wallNowMs } from '../clock';

const readinessSchema = {
  type: 'object', required: ['ready', 'checks'],
  properties: {
    ready: { type: 'boolean' },
    checks: {
      type: 'object', description: 'by dependency (postgres, redis, kafka, schema_registry) and thread (thread:<role>)',
      additionalProperties: { type: 'object', required: ['ok', 'latency_ms'], properties: { ok: { type: 'boolean' }, latency_ms: { type: 'integer' }, error: { type: 'string' } } },
    },
  },
};

export function metaRoutes(runtime: Runtime, allRoutes: () => RouteDef[]): RouteDef[] {
  let document: Record<string, unknown> | null = null;
  // /readyz is public: its four dependency checks run at most once per readinessCacheMs, however
  // often it is called, and callers meanwhile (concurrent ones too) share the last answer.
  let readiness: { atMs: number; report: Promise<ReadinessReport> } | null = null;
  const ready = (): Promise<ReadinessReport> => {
    if (readiness === null || wallNowMs() - readiness.atMs >= runtime.config.readinessCacheMs) {
      const report = checkReadiness(runtime);
      readiness = { atMs: wallNowMs(), report };
      report.catch(() => { readiness = null; });
    }
    return readiness.report;
  };
  return [
    {
      method: 'GET', path: '/healthz', operationId: 'health', summary: 'The process is up', tag: 'meta',
      auth: { kind: 'public' },
      response: { status: 200, description: 'up', schema: { type: 'object', required: ['status'], properties: { status: { type: 'string', const: 'ok' } } } },
      handler: async () => ({ status: 200, body: { status: 'ok' } }),
    },
    {
      method: 'GET', path: '/readyz', operationId: 'readiness', summary: 'Postgres, Redis, Kafka and the schema registry answer (checked at most every READINESS_CACHE_MS, 2 s by default)', tag: 'meta',
      auth: { kind: 'public' },
      response: { status: 200, description: 'every dependency and thread is ready', schema: readinessSchema },
      extraResponses: [{ status: 503, description: 'not ready: the failing checks say what is missing', schema: readinessSchema }],
      handler: async () => {
        const report = await ready();
        return { status: report.ready ? 200 : 503, body: report };
      },
    },
    {
      method: 'GET', path: '/v1/openapi.json', operationId: 'openapi', summary: 'OpenAPI 3.1 description of the sandbox API', tag: 'meta',
      auth: { kind: 'public' },
      response: { status: 200, description: 'the OpenAPI document', schema: { type: 'object' } },
      handler: async () => {
        document ??= openApiDocument(allRoutes(), `http://${runtime.config.host}:${runtime.config.port}`);
        return { status: 200, body: document };
      },
    },
  ];
}
