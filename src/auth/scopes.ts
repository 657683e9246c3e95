// Scopes a restricted (rk_) key can hold (SPEC.md section 5, plus the ones later routes need).
export const SCOPES = [
  'transfers:write',
  'transfers:read',
  'transactions:read',
  'payments:write',
  'payments:read',
  'customers:write',
  'customers:read',
  'contacts:write',
  'contacts:read',
  'fx:write',
  'fx:read',
  'request_logs:read',
  'webhooks:write',
  'webhooks:read',
  'events:read',
  'wallets:write',
  'wallets:read',
  'holds:write',
  'holds:read',
  'balance_alerts:write',
  'balance_alerts:read',
] as const;

export type Scope = (typeof SCOPES)[number];
