// Partner links (DESIGN.md section 5c): a customer gives consent on the partner's page, the
// partner sends the person's browser back to the callback, and the link is active. The callback
// is a page a person sees, so it answers HTML; everything else is JSON.
import { ownCustomer } from '../customers/own-customer';
import type { Db } from '../db';
import { DomainError } from '../domain-error';
import { listResponseSchema } from '../http/pagination';
import { withBody, type RouteDef, type RouteRequest } from '../http/route';
import { idParams } from '../http/validation';
import { createdId } from '../idempotency/derived-ids';
import { createdAnswer } from '../idempotency/guard';
import { PARTNER_SLUGS } from '../partners/registry';
import type { PartnerLinkRow, PartnerLinks } from './links';
import { requirePartner } from './links';

const nullableDate = { type: ['string', 'null'], format: 'date-time' };
const linkSchema = {
  type: 'object', required: ['id', 'customer_id', 'partner', 'status', 'authorize_url', 'failure', 'created_at', 'linked_at', 'revoked_at'],
  properties: {
    id: { type: 'string', format: 'uuid' }, customer_id: { type: 'string', format: 'uuid' },
    partner: { type: 'string', enum: [...PARTNER_SLUGS] },
    status: { type: 'string', enum: ['pending', 'active', 'failed', 'revoked'], description: 'pending until the customer answers on the partner\'s page' },
    authorize_url: { type: ['string', 'null'], description: 'the partner\'s consent page, for the customer to open; answered when the link is created, and by a replay of its Idempotency-Key while the link waits for consent (once it has moved on, or its request expired, the replay answers the OAuth state "[redacted]", header Secret-Redacted: true); null in reads' },
    failure: { type: ['object', 'null'], required: ['code', 'message'], properties: { code: { type: 'string' }, message: { type: 'string' } } },
    created_at: { type: 'string', format: 'date-time' }, linked_at: nullableDate, revoked_at: nullableDate,
  },
};

const fundingMethodSchema = {
  type: 'object', required: ['external_id', 'kind', 'currency', 'label', 'default'],
  properties: {
    external_id: { type: 'string', description: 'pass as source_funding_method_external_id' },
    kind: { type: 'string', enum: ['wallet', 'bank', 'viban'] }, currency: { type: 'string' }, label: { type: 'string' }, default: { type: 'boolean' },
  },
};

export function linkView(link: PartnerLinkRow, authorizeUrl: string | null = null) {
  return {
    id: link.id, customer_id: link.customer_id, partner: link.partner, status: link.status, authorize_url: authorizeUrl,
    failure: link.failure_code ? { code: link.failure_code, message: link.failure_message ?? '' } : null,
    created_at: link.created_at.toISOString(), linked_at: link.linked_at?.toISOString() ?? null, revoked_at: link.revoked_at?.toISOString() ?? null,
  };
}

const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

function page(title: string, message: string): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>${escapeHtml(title)}</title><meta name="viewport" content="width=device-width, initial-scale=1"></head>
<body><main><h1>${escapeHtml(title)}</h1><p>${escapeHtml(message)}</p></main></body></html>`;
}

/** A partner slug; another is 400 invalid_partner. */
const partnerSchema = { type: 'string', enum: [...PARTNER_SLUGS], 'x-error': 'invalid_partner', description: `one of ${PARTNER_SLUGS.join(', ')}` } as const;


export function partnerLinkRoutes(db: Db, links: PartnerLinks): RouteDef[] {
  /** The customer named in the path, if the caller may act for it. */
  const pathCustomer = (request: RouteRequest) => ownCustomer(db, request, request.params.id);
  return [
    withBody({
      type: 'object', additionalProperties: false, required: ['partner'],
      properties: { partner: partnerSchema },
    } as const, {
      method: 'POST', path: '/v1/customers/{id}/partner-links', operationId: 'createPartnerLink', tag: 'partner-links',
      summary: 'Start linking a customer with a partner: the customer gives consent at authorize_url',
      auth: { kind: 'key', scope: 'customers:write' }, idempotent: true, params: idParams, secretFields: ['authorize_url'],
      // A client whose answer was lost retries under its key: while the link waits for consent,
      // the replay gives its consent page again (the kept answer has the state redacted).
      restoreSecrets: async (kept) => {
        const answer = kept as ReturnType<typeof linkView>;
        const authorizeUrl = await links.consentPage(answer.id);
        return authorizeUrl === null ? null : { ...answer, authorize_url: authorizeUrl };
      },
      response: { status: 201, description: 'the pending link and its consent page', schema: linkSchema },
      errors: ['invalid_partner'],
      handler: async (request) => {
        const partner = requirePartner(request.body.partner);
        const customer = await pathCustomer(request);
        const { link, authorizeUrl, created } = await links.create(createdId('partner-link', request.executionId), customer.account_id, customer.id, partner);
        return createdAnswer(linkView(link, authorizeUrl), created);
      },
    }),
    {
      method: 'GET', path: '/v1/customers/{id}/partner-links', operationId: 'listPartnerLinks', tag: 'partner-links',
      summary: 'A customer\'s partner links, newest first', auth: { kind: 'key', scope: 'customers:read' }, params: idParams,
      response: { status: 200, description: 'the links', schema: listResponseSchema(linkSchema) },
      handler: async (request) => {
        const customer = await pathCustomer(request);
        return { status: 200, body: { data: (await links.ofCustomer(customer.id)).map((link) => linkView(link)), has_more: false, next_cursor: null } };
      },
    },
    {
      method: 'DELETE', path: '/v1/customers/{id}/partner-links/{link_id}', operationId: 'revokePartnerLink', tag: 'partner-links',
      summary: 'Revoke a link: its tokens are forgotten, and payments through it stop', auth: { kind: 'key', scope: 'customers:write' }, idempotent: true,
      params: { type: 'object', properties: { id: { type: 'string', format: 'uuid' }, link_id: { type: 'string', format: 'uuid' } } },
      response: { status: 200, description: 'the link, revoked', schema: linkSchema },
      handler: async (request) => {
        const customer = await pathCustomer(request);
        const link = await links.byId(request.params.link_id);
        if (!link || link.customer_id !== customer.id) throw new DomainError('resource_not_found', 'no such link for this customer', request.params.link_id);
        return { status: 200, body: linkView(await links.revoke(link.id)) };
      },
    },
    {
      method: 'GET', path: '/v1/customers/{id}/funding-methods', operationId: 'listFundingMethods', tag: 'partner-links',
      summary: 'Where a linked customer\'s payments through a partner can come from, as the partner lists them',
      auth: { kind: 'key', scope: 'customers:read' }, params: idParams,
      query: { type: 'object', additionalProperties: false, required: ['partner'], properties: { partner: partnerSchema } },
      response: { status: 200, description: 'the funding methods; add-funds and send use the default one when the request names none', schema: listResponseSchema(fundingMethodSchema) },
      errors: ['invalid_partner', 'customer_not_linked', 'partner_unavailable', 'partner_error'],
      handler: async (request) => {
        const partner = requirePartner(request.query.partner);
        const customer = await pathCustomer(request);
        const methods = await links.fundingMethods(await links.activeLink(customer.id, partner));
        return { status: 200, body: { data: methods, has_more: false, next_cursor: null } };
      },
    },
    {
      method: 'GET', path: '/v1/partner-links/callback', operationId: 'partnerLinkCallback', tag: 'partner-links',
      summary: 'Where the partner sends the customer\'s browser back after consent (an HTML page)', auth: { kind: 'public' },
      response: { status: 200, description: 'the link is active', schema: { type: 'string' }, contentType: 'text/html' },
      extraResponses: [
        { status: 400, description: 'consent denied, or a code the partner refused', schema: { type: 'string' }, contentType: 'text/html' },
        { status: 404, description: 'an unknown link request, or one already used', schema: { type: 'string' }, contentType: 'text/html' },
        { status: 503, description: 'the partner did not answer the code exchange: the request stands; reload the page after Retry-After seconds', schema: { type: 'string' }, contentType: 'text/html' },
      ],
      handler: async (request) => {
        // Query values the partner sends; a repeated one counts once.
        const first = (name: string) => { const v = request.koa.query[name]; return Array.isArray(v) ? v[0] : v; };
        const outcome = await links.complete({ state: first('state'), code: first('code'), error: first('error') });
        if (outcome.kind === 'linked') {
          return { status: 200, body: page('Account linked', `Your ${outcome.link.partner} account is linked. You can close this window.`) };
        }
        if (outcome.kind === 'failed') return { status: 400, body: page('Account not linked', outcome.link.failure_message ?? 'the link failed') };
        if (outcome.kind === 'partner_unavailable') {
          return { status: 503, headers: { 'Retry-After': '2' }, body: page('The partner is not answering', 'The partner did not answer in time. Reload this page in a moment to finish linking your account.') };
        }
        return { status: 404, body: page('Link request not recognised', 'This link request is unknown or was already used. Start again from the application that sent you here.') };
      },
    },
  ];
}
