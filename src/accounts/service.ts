// Accounts and their credentials: sandbox sign-up, sign-in, KYB status, API keys.
import { randomUUID } from 'node:crypto';
import { canonicalEmail } from '../../ledger/emails';
import { ACCOUNT_WITH_WALLET, accountView, accountWithWalletView, apiKeyView, vibanView, type AccountRow, type AccountWithWallet, type ApiKeyRow, type KybStatus } from '../auth/account-views';
import { generateApiKey, hashPassword, verifyPassword, type KeyType, type SessionTokens } from '../auth/credentials';
import type { KeyMarks } from '../auth/key-cache';
import type { Config } from '../config';
import type { Db } from '../db';
import { keysetPage, type PageRequest } from '../db/keyset-pages';
import { DomainError } from '../domain-error';
import { newChainWalletAddress, newVibans } from './vibans';

export interface SandboxAccountInput {
  email: string;
  password: string;
  business_name: string;
  country_code: string;
  kyb_status?: KybStatus;
  chain_wallet?: boolean;
  vibans?: boolean;
  /** The test clock the account lives on (DESIGN.md section 5i); fixed for the account's life. */
  test_clock_id?: string;
}

export class AccountService {
  constructor(private readonly db: Db, private readonly config: Config, private readonly sessions: SessionTokens, private readonly keys: KeyMarks) {}

  /** @throws DomainError resource_already_exists when the email is taken */
  async createSandboxAccount(input: SandboxAccountInput) {
    const passwordHash = await hashPassword(input.password, this.config.passwordHashCost);
    const accountId = randomUUID();
    const key = generateApiKey('secret', this.config.environment);
    const created = await this.db.transaction(async (trx) => {
      // The account must name a clock that exists (the foreign key would say so as a 500).
      if (input.test_clock_id !== undefined && !(await trx('test_clocks').where('id', input.test_clock_id).forShare().first('id'))) {
        throw new DomainError('invalid_request', 'no such test clock', 'test_clock_id');
      }
      const inserted = await trx.raw(
        `INSERT INTO accounts (id, email, password_hash, business_name, country_code, kyb_status, environment, test_clock_id)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT ((lower(email))) DO NOTHING RETURNING *`,
        [accountId, input.email, passwordHash, input.business_name, input.country_code, input.kyb_status ?? 'active', this.config.environment, input.test_clock_id ?? null],
      );
      if (inserted.rowCount === 0) {
        throw new DomainError('resource_already_exists', 'an account with this email already exists', 'email');
      }
      const vibans = input.vibans === false ? [] : newVibans().map((v) => ({ id: randomUUID(), account_id: accountId, ...v }));
      if (vibans.length > 0) await trx('vibans').insert(vibans);
      const wallet = input.chain_wallet ? { id: randomUUID(), account_id: accountId, network: 'sandbox-chain', address: newChainWalletAddress() } : null;
      if (wallet) await trx('chain_wallets').insert(wallet);
      const [keyRow] = await trx('api_keys').insert({
        id: randomUUID(), account_id: accountId, type: 'secret', environment: this.config.environment,
        name: 'default', key_hash: key.hash, key_hint: key.hint, scopes: [],
      }).returning('*');
      return { account: inserted.rows[0] as AccountRow, vibans, wallet, keyRow: keyRow as ApiKeyRow };
    });
    const session = await this.sessions.issue(accountId);
    return {
      account: accountView(created.account, created.wallet),
      vibans: created.vibans.map(vibanView),
      api_key: { ...apiKeyView(created.keyRow), key: key.key },
      session,
    };
  }

  /** @throws DomainError invalid_credentials (the same for an unknown email and a wrong password) */
  async signIn(email: string, password: string) {
    const account: { id: string; password_hash: string } | undefined = await this.db('accounts').whereRaw('lower(email) = ?', [canonicalEmail(email)]).first('id', 'password_hash');
    const valid = await verifyPassword(password, account?.password_hash ?? null, this.config.passwordHashCost);
    if (!account || !valid) throw new DomainError('invalid_credentials', 'the email or password is not correct');
    return this.sessions.issue(account.id);
  }

  /** @throws DomainError resource_not_found */
  async getAccount(accountId: string) {
    const row: AccountWithWallet | undefined = await this.db('accounts')
      .leftJoin('chain_wallets', 'chain_wallets.account_id', 'accounts.id')
      .where('accounts.id', accountId)
      .first(ACCOUNT_WITH_WALLET);
    if (!row) throw new DomainError('resource_not_found', 'no such account', accountId);
    return accountWithWalletView(row);
  }

  /**
   * Cached keys carry the KYB status: once this answers, every request in every process sees the
   * new one. The account's keys are held before the change commits and released after it.
   * @throws DomainError resource_not_found | service_unavailable (nothing changed)
   */
  async setKybStatus(accountId: string, status: KybStatus) {
    const hold = await this.db.transaction(async (trx) => {
      // FOR UPDATE: a key created meanwhile (its foreign key takes FOR KEY SHARE on the account)
      // waits for this commit, so every key that could be cached with the old status is held.
      const account = await trx('accounts').where('id', accountId).forUpdate().first('id');
      if (!account) throw new DomainError('resource_not_found', 'no such account', accountId);
      const hashes: Array<{ key_hash: string }> = await trx('api_keys').where('account_id', accountId).whereNull('revoked_at').select('key_hash');
      const held = await this.keys.hold(hashes.map((h) => h.key_hash));
      await trx('accounts').where('id', accountId).update({ kyb_status: status, updated_at: trx.fn.now() });
      return held;
    });
    await this.keys.release(hold);
    return this.getAccount(accountId);
  }

  async listVibans(accountId: string) {
    const rows = await this.db('vibans').where('account_id', accountId).orderBy('currency');
    return rows.map(vibanView);
  }

  /**
   * A key under `id` (derived from its Idempotency-Key's execution), with its secret. A key made
   * under it by an execution whose request died before answering was never shown to anyone: it
   * takes this secret, and stays the account's one key of the request.
   */
  async createApiKey(id: string, accountId: string, type: KeyType, scopes: string[], name: string | null) {
    const key = generateApiKey(type, this.config.environment);
    return this.db.transaction(async (trx) => {
      const before = await trx('api_keys').where({ id }).forUpdate().first('id');
      const [row] = before
        ? await trx('api_keys').where({ id }).update({ key_hash: key.hash, key_hint: key.hint }).returning('*')
        : await trx('api_keys').insert({
          id, account_id: accountId, type, environment: this.config.environment,
          name, key_hash: key.hash, key_hint: key.hint, scopes: type === 'restricted' ? scopes : [],
        }).returning('*');
      return { key: { ...apiKeyView(row as ApiKeyRow), key: key.key }, created: !before };
    });
  }

  /** @throws DomainError invalid_request (a cursor not among the account's keys, or both starts) */
  listApiKeys(accountId: string, page: PageRequest) {
    return keysetPage(this.db('api_keys').where('account_id', accountId).select('*'), 'api_keys', page, apiKeyView);
  }

  /** @throws DomainError resource_not_found | cross_account_access_denied | service_unavailable (nothing changed) */
  async revokeApiKey(actingAccountId: string | null, keyId: string) {
    const row: (ApiKeyRow & { key_hash: string }) | undefined = await this.db('api_keys').where('id', keyId).first();
    if (!row) throw new DomainError('resource_not_found', 'no such API key', keyId);
    if (actingAccountId !== null && row.account_id !== actingAccountId) {
      throw new DomainError('cross_account_access_denied', 'this API key belongs to another account', keyId);
    }
    // The marker before the revocation: a cache fill that read the key before it commits can no
    // longer land. Without the marker nothing is revoked, and the same request again revokes.
    await this.keys.markRevoked(row.key_hash);
    const [revoked] = await this.db('api_keys').where('id', keyId).update({ revoked_at: this.db.raw('coalesce(revoked_at, now())') }).returning('*');
    return apiKeyView(revoked as ApiKeyRow);
  }
}
