// Who may call what: the scopes of restricted keys, the credential rule each route declares, and
// the principal a credential authenticates as. The routes (src/http) declare rules; this folder
// checks them.
import type { Scope } from './scopes';
import type { AccountView } from './account-views';

/**
 * Who may call a route:
 * - `public`: no credential at all (POST /v1/fx/quotes, sandbox bootstrap, health);
 * - `dashboard`: session JWT or master key only (SPEC.md section 5);
 * - `key`: any valid credential; rk_ keys need `scope` (null only where any credential of the
 *   account may read: its own account); pk_ keys only read, and only where `publishable` says a
 *   page may show the answer;
 * - `admin`: the master key only;
 * - `session`: a session JWT alone (signing that session out).
 * `moneyMoving` routes also require the account's KYB status to be active.
 */
export type AuthRule =
  | { kind: 'public' }
  | { kind: 'dashboard'; moneyMoving?: boolean }
  | { kind: 'key'; scope: Scope | null; moneyMoving?: boolean; publishable?: PublishableReads }
  | { kind: 'admin'; moneyMoving?: undefined }
  | { kind: 'session'; moneyMoving?: undefined };

/**
 * A publishable (pk_) key is embedded in a page, so anyone who loads the page has it: it reads
 * only what the page may show anyway, on the routes that say so (`'reads'`), never request logs,
 * bank details, claim links, customers or events. Any other route refuses it, a new one included.
 */
export type PublishableReads = 'reads';

export interface Principal {
  /** `secret` | `publishable` | `restricted` API key, `session` JWT, or the `master` key. */
  kind: 'secret' | 'publishable' | 'restricted' | 'session' | 'master';
  /** The caller's account; null only for the master key. */
  accountId: string | null;
  /** Id of the credential (API key id, or the session's account id); never the secret. */
  credentialId: string;
  scopes: readonly string[];
  isAdmin: boolean;
  /** The caller's account as read at authentication; absent for the master key. */
  account?: AccountView;
  /** For a session: its id and expiry (seconds), what signing out needs. */
  session?: { id: string; expiresAt: number };
}

/** What authentication needs of a route: its credential rule and its method. */
export interface Guarded { auth: AuthRule; method: string }
