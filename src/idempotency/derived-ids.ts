// Ids derived from what a request says, so that a retried request names the same command and the
// same resource: the ledger decides a command once, whoever repeats it.
import { createHash } from 'node:crypto';

/** A UUID derived from stable input, so a retried request names the same command and resource. */
export function derivedUuid(...parts: string[]): string {
  const hex = createHash('sha256').update(parts.join('\u0000')).digest('hex');
  const variant = ((Number.parseInt(hex[16], 16) & 0x3) | 0x8).toString(16);
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-5${hex.slice(13, 16)}-${variant}${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}

/** The id of the ledger command an account's Idempotency-Key names, on every route the ledger decides. */
export const idempotentCommandId = (accountId: string, key: string): string => derivedUuid('idempotency-key', accountId, key);

/**
 * The id of what a creation under an Idempotency-Key makes, derived from the key's execution
 * (RouteRequest.executionId): a retry that takes over from a request that died after making it
 * names the same resource, finds it, and answers it instead of making a second.
 */
export function createdId(kind: string, executionId: string | null): string {
  if (executionId === null) throw new Error(`a ${kind} is created only under an Idempotency-Key's execution`);
  return derivedUuid('created', kind, executionId);
}
