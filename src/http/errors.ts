// The one place where failures become HTTP responses (SPEC.md section 2, error body).
// Domain errors are exposed as they are; anything else is a bug and becomes an opaque 500.
import type Koa from 'koa';
import { InvalidMoney } from '../../ledger/money';
import { DomainError, errorBody, isDomainError } from '../domain-error';
import { log } from '../log';
import { dependencyUnavailable, unavailableDependency } from './unavailable';

export function toDomainError(error: unknown, ctx: Koa.Context): DomainError {
  if (isDomainError(error)) return error;
  if (error instanceof InvalidMoney) return new DomainError(error.code, error.message, error.field);
  const dependency = unavailableDependency(error);
  if (dependency) {
    log.warn({ err: error, requestId: ctx.state.requestId, dependency }, 'a dependency is unavailable');
    return dependencyUnavailable(dependency);
  }
  log.error({ err: error, requestId: ctx.state.requestId, method: ctx.method, path: ctx.path }, 'unhandled error');
  return new DomainError('internal_error', 'an unexpected error occurred; the request id identifies it', ctx.state.requestId ?? null);
}

export function writeError(ctx: Koa.Context, error: DomainError): void {
  ctx.status = error.status;
  ctx.body = errorBody(error);
  for (const [name, value] of Object.entries(error.headers)) ctx.set(name, value);
}

export const errorMiddleware: Koa.Middleware = async (ctx, next) => {
  try {
    await next();
    if (ctx.body === undefined && ctx.status === 404) {
      throw new DomainError('resource_not_found', `no route for ${ctx.method} ${ctx.path}`, ctx.path);
    }
  } catch (error) {
    writeError(ctx, toDomainError(error, ctx));
  }
};
