// Partner links (DESIGN.md section 5c; SPEC.md section 5, three-legged flow): a customer's
// consent, given on the partner's own page, for this service to pay through that partner on the
// customer's behalf. A link starts `pending` with an authorize_url whose `state` is a one-time
// secret, good for STATE_TTL_MS: kept as a hash to find the link by, and sealed so that a replay
// of the creation under its Idempotency-Key (its first answer lost) can give the consent page
// again while the link is pending. The partner's redirect to the callback spends it, the code is
// exchanged server to server, and the link is `active` with its tokens sealed at rest. Tokens are
// refreshed when they near expiry; a link can be revoked.
import { createHash, randomBytes } from 'node:crypto';
import type { Db } from '../db';
import { DomainError } from '../domain-error';
import { log } from '../log';
import type { FundingMethod, PartnerClient, UserTokens } from '../partners/client';
import { isPartnerError } from '../partners/errors';
import type { PartnerSlug } from '../partners/registry';
import { isPartnerSlug, PARTNER_SLUGS } from '../partners/registry';
import type { SecretVault } from '../vault';
import { wallNow, wallNowMs } from '../clock';

export const STATE_TTL_MS = 15 * 60_000;
/** Refresh an access token this long before the partner said it expires. */
const REFRESH_EARLY_MS = 30_000;

export type LinkStatus = 'pending' | 'active' | 'failed' | 'revoked';

export interface PartnerLinkRow {
  id: string; account_id: string; customer_id: string; partner: PartnerSlug; status: LinkStatus;
  state_hash: string | null; state_sealed: string | null; state_expires_at: Date | null;
  access_token_sealed: string | null; refresh_token_sealed: string | null; access_token_expires_at: Date | null;
  partner_user_id: string | null; failure_code: string | null; failure_message: string | null;
  created_at: Date; updated_at: Date; linked_at: Date | null; revoked_at: Date | null;
}

/** How a callback ended, for the page the person sees. */
export type CallbackOutcome =
  | { kind: 'linked'; link: PartnerLinkRow }
  | { kind: 'failed'; link: PartnerLinkRow }
  /** The partner did not answer the code exchange: the request stands, the same callback may be opened again. */
  | { kind: 'partner_unavailable' }
  | { kind: 'unknown_state' };

export interface PartnerLinkSettings {
  clientId: string;
  /** The partner's base address, e.g. http://127.0.0.1:4000/fiat. */
  partnerUrl: (partner: PartnerSlug) => string;
  /** This service's callback, registered with the partners; known once the API listens. */
  redirectUri: () => string;
  clients: (partner: PartnerSlug) => PartnerClient;
}

const hashState = (state: string) => createHash('sha256').update(state).digest('hex');

export class PartnerLinks {
  constructor(private readonly db: Db, private readonly vault: SecretVault, private readonly settings: PartnerLinkSettings) {}

  /**
   * A pending link under `id` (derived from its Idempotency-Key's execution) and the partner page
   * where the customer gives consent. A link made under it by an execution whose request died
   * before answering was never shown: while pending, it takes this consent page's state.
   */
  async create(id: string, accountId: string, customerId: string, partner: PartnerSlug): Promise<{ link: PartnerLinkRow; authorizeUrl: string; created: boolean }> {
    const state = randomBytes(32).toString('base64url');
    const now = wallNow();
    const stateFields = { state_hash: hashState(state), state_sealed: this.vault.seal(state), state_expires_at: new Date(now.getTime() + STATE_TTL_MS), updated_at: now };
    const [made] = await this.db('partner_links').insert({ id, account_id: accountId, customer_id: customerId, partner, status: 'pending', created_at: now, ...stateFields })
      .onConflict('id').ignore().returning('*');
    const [link]: PartnerLinkRow[] = made ? [made]
      : await this.db('partner_links').where({ id, status: 'pending' }).update(stateFields).returning('*');
    if (!link) throw new DomainError('idempotency_conflict', 'the link this Idempotency-Key made is no longer pending', 'Idempotency-Key');
    return { link, authorizeUrl: this.authorizeUrl(partner, state), created: Boolean(made) };
  }

  /**
   * The consent page of a link still waiting for it (pending, its state unspent and unexpired), as
   * its creation answered it; null once the link has moved on or the state is no longer good.
   */
  async consentPage(id: string): Promise<string | null> {
    const link = await this.byId(id);
    if (!link || link.status !== 'pending' || link.state_hash === null || link.state_sealed === null) return null;
    if (link.state_expires_at!.getTime() <= wallNowMs()) return null;
    return this.authorizeUrl(link.partner, this.vault.open(link.state_sealed));
  }

  private authorizeUrl(partner: PartnerSlug, state: string): string {
    const query = new URLSearchParams({ client_id: this.settings.clientId, redirect_uri: this.settings.redirectUri(), response_type: 'code', state });
    return `${this.settings.partnerUrl(partner)}/oauth/authorize?${query}`;
  }

  /**
   * The partner's redirect: spends the state first (a replayed callback finds nothing), then
   * exchanges the code, outside any transaction, and records what came of it.
   */
  async complete(answer: { state?: string; code?: string; error?: string }): Promise<CallbackOutcome> {
    if (!answer.state) return { kind: 'unknown_state' };
    const [spent]: PartnerLinkRow[] = await this.db('partner_links')
      .where({ state_hash: hashState(answer.state), status: 'pending' })
      .update({ state_hash: null, updated_at: wallNow() }).returning('*');
    if (!spent) return { kind: 'unknown_state' };
    if (spent.state_expires_at!.getTime() <= wallNowMs()) return this.fail(spent, 'link_request_expired', 'the link request expired before the partner answered; create a new link');
    if (answer.error) {
      return this.fail(spent, answer.error === 'access_denied' ? 'access_denied' : 'partner_refused',
        answer.error === 'access_denied' ? 'consent was denied on the partner\'s page' : `the partner answered ${answer.error}`);
    }
    if (!answer.code) return this.fail(spent, 'partner_refused', 'the partner answered without a code');
    let tokens: UserTokens;
    try {
      tokens = await this.settings.clients(spent.partner).exchangeCode(answer.code, this.settings.redirectUri());
    } catch (error) {
      if (!isPartnerError(error)) throw error;
      if (error.kind === 'unavailable') {
        // Nothing was decided: the state is given back, so reloading the page exchanges the code again.
        log.warn({ linkId: spent.id, err: error.message }, 'the partner did not answer a link code exchange; the link request stands');
        await this.db('partner_links').where({ id: spent.id, status: 'pending' }).whereNull('state_hash')
          .update({ state_hash: hashState(answer.state), updated_at: wallNow() });
        return { kind: 'partner_unavailable' };
      }
      log.warn({ linkId: spent.id, err: error.message }, 'the partner refused to exchange a link code');
      return this.fail(spent, 'partner_refused', `the partner refused the authorization code (${error.partnerCode ?? error.kind})`);
    }
    return { kind: 'linked', link: await this.activate(spent, tokens) };
  }

  /** Active with sealed tokens; a customer's earlier active link with the partner is replaced. */
  private async activate(link: PartnerLinkRow, tokens: UserTokens): Promise<PartnerLinkRow> {
    const now = wallNow();
    return this.db.transaction(async (trx) => {
      await trx('partner_links').where({ customer_id: link.customer_id, partner: link.partner, status: 'active' })
        .update({ status: 'revoked', revoked_at: now, updated_at: now, access_token_sealed: null, refresh_token_sealed: null, access_token_expires_at: null });
      const [active] = await trx('partner_links').where('id', link.id).update({
        status: 'active', linked_at: now, updated_at: now, partner_user_id: tokens.userId, state_sealed: null, ...this.sealed(tokens),
      }).returning('*');
      return active;
    });
  }

  private sealed(tokens: UserTokens) {
    return {
      access_token_sealed: this.vault.seal(tokens.accessToken), refresh_token_sealed: this.vault.seal(tokens.refreshToken),
      access_token_expires_at: new Date(wallNowMs() + tokens.expiresInMs),
    };
  }

  private async fail(link: PartnerLinkRow, code: string, message: string): Promise<CallbackOutcome> {
    const [failed] = await this.db('partner_links').where('id', link.id)
      .update({ status: 'failed', failure_code: code, failure_message: message, state_sealed: null, updated_at: wallNow() }).returning('*');
    return { kind: 'failed', link: failed };
  }

  async byId(id: string): Promise<PartnerLinkRow | undefined> {
    return this.db('partner_links').where('id', id).first();
  }

  async ofCustomer(customerId: string): Promise<PartnerLinkRow[]> {
    return this.db('partner_links').where('customer_id', customerId).orderBy([{ column: 'created_at', order: 'desc' }, { column: 'id', order: 'desc' }]);
  }

  /** The customer's active link with the partner. @throws DomainError customer_not_linked */
  async activeLink(customerId: string, partner: PartnerSlug): Promise<PartnerLinkRow> {
    const link: PartnerLinkRow | undefined = await this.db('partner_links').where({ customer_id: customerId, partner, status: 'active' }).first();
    if (!link) throw new DomainError('customer_not_linked', `the customer has no active link with ${partner}: create one with POST /v1/customers/{id}/partner-links`, 'customer_id');
    return link;
  }

  /** Revoked: its tokens are forgotten. Revoking a link that is not active changes nothing. */
  async revoke(id: string): Promise<PartnerLinkRow> {
    const now = wallNow();
    const [revoked] = await this.db('partner_links').where('id', id).whereIn('status', ['active', 'pending']).update({
      status: 'revoked', revoked_at: now, updated_at: now, state_hash: null, state_sealed: null, access_token_sealed: null, refresh_token_sealed: null, access_token_expires_at: null,
    }).returning('*');
    return revoked ?? (await this.byId(id))!;
  }

  /**
   * A usable access token of an active link, refreshed first when it nears expiry or when the
   * partner `refused` the one stored. The row is
   * locked while refreshing: the partner retires a refresh token once used, so two refreshes of
   * one link at once would leave one of them with a dead token.
   */
  async accessToken(link: PartnerLinkRow, refused: string | null = null): Promise<string> {
    const fresh = (row: PartnerLinkRow) => row.access_token_expires_at!.getTime() - REFRESH_EARLY_MS > wallNowMs();
    if (refused === null && fresh(link)) return this.vault.open(link.access_token_sealed!);
    return this.db.transaction(async (trx) => {
      const current: PartnerLinkRow | undefined = await trx('partner_links').where({ id: link.id, status: 'active' }).forUpdate().first();
      if (!current) throw new DomainError('customer_not_linked', 'the partner link is no longer active', link.id);
      // Another caller may have refreshed while this one waited for the lock.
      const stored = this.vault.open(current.access_token_sealed!);
      if (fresh(current) && stored !== refused) return stored;
      const tokens = await this.settings.clients(current.partner).refreshUserTokens(this.vault.open(current.refresh_token_sealed!));
      await trx('partner_links').where('id', current.id).update({ ...this.sealed(tokens), updated_at: wallNow() });
      return tokens.accessToken;
    });
  }

  /** The customer's funding methods on the partner. @throws DomainError partner_unavailable, partner_error */
  async fundingMethods(link: PartnerLinkRow): Promise<FundingMethod[]> {
    try {
      return await this.withToken(link, (token) => this.settings.clients(link.partner).listFundingMethods(token));
    } catch (error) {
      if (!isPartnerError(error)) throw error;
      if (error.kind === 'unavailable') throw new DomainError('partner_unavailable', `${link.partner} is unavailable; retry with exponential backoff`, link.partner);
      throw new DomainError('partner_error', `${link.partner} answered unexpectedly (${error.partnerCode ?? error.kind})`, link.partner);
    }
  }

  /**
   * Runs a partner call with the link's access token (SPEC.md section 5): an "Invalid token"
   * answer is retried once with the same token, then (as an expired token is at once) with a
   * refreshed one.
   */
  async withToken<T>(link: PartnerLinkRow, call: (accessToken: string) => Promise<T>): Promise<T> {
    const refused = (error: unknown) => isPartnerError(error) && error.httpStatus === 401;
    const token = await this.accessToken(link);
    try {
      return await call(token);
    } catch (error) {
      if (!refused(error)) throw error;
      if (isPartnerError(error) && error.partnerCode === 'invalid_token') {
        try {
          return await call(token);
        } catch (again) {
          if (!refused(again)) throw again;
        }
      }
    }
    return call(await this.accessToken(link, token));
  }
}

/** @throws DomainError invalid_partner */
export function requirePartner(value: string, field = 'partner'): PartnerSlug {
  if (!isPartnerSlug(value)) throw new DomainError('invalid_partner', `partner must be one of ${PARTNER_SLUGS.join(', ')}`, field);
  return value;
}
