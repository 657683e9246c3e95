// Sandbox bootstrap, sign-in, the caller's own account and its virtual IBANs
// (SPEC.md section 4 "Account"; DESIGN.md section 5 "Sandbox bootstrap").
import { accountIdQuerySchema, actingAccountId } from '../http/acting-account';
import type { SessionRevocations } from '../auth/session-revocations';
import type { Environment } from '../config';
import { COUNTRY_CODES, countryCodeSchema } from '../countries';
import { DomainError } from '../domain-error';
import type { SignInLockout } from '../guards/sign-in-lockout';
import { listResponseSchema } from '../http/pagination';
import { withBody, type RouteDef } from '../http/route';
import { idParams } from '../http/validation';
import { apiKeyWithSecretSchema } from './api-key-schemas';
import type { AccountService } from './service';
import { KYB_STATUSES } from '../auth/account-views';

const accountSchema = {
  type: 'object', required: ['id', 'email', 'business_name', 'country_code', 'kyb_status', 'environment', 'chain_wallet', 'created_at'],
  properties: {
    id: { type: 'string', format: 'uuid' }, email: { type: 'string' }, business_name: { type: 'string' },
    country_code: { type: 'string' }, kyb_status: { type: 'string', enum: [...KYB_STATUSES] }, environment: { type: 'string' },
    chain_wallet: { type: ['object', 'null'], required: ['network', 'address'], properties: { network: { type: 'string' }, address: { type: 'string' } } },
    created_at: { type: 'string', format: 'date-time' },
  },
};
const sessionSchema = {
  type: 'object', required: ['token', 'expires_at'],
  properties: { token: { type: 'string', description: 'a session JWT' }, expires_at: { type: 'string', format: 'date-time' } },
};
const emailSchema = { type: 'string', format: 'email', maxLength: 254 } as const;
const vibanSchema = {
  type: 'object', required: ['id', 'currency', 'bank_name', 'bank_country', 'account_number', 'routing_number'],
  properties: {
    id: { type: 'string' }, currency: { type: 'string' }, bank_name: { type: 'string' }, bank_country: { type: 'string', enum: COUNTRY_CODES, description: 'ISO 3166-1 alpha-2, as a transfer\'s recipient.bank.country takes it' },
    account_number: { type: 'string' }, routing_number: { type: 'string' },
  },
};

const ATTEMPTS_NOTE = 'too many credential attempts (sign-ins, sign-ups, refused credentials) from this client address or for this email';

export function accountRoutes(accounts: AccountService, environment: Environment, lockout: SignInLockout, signOuts: SessionRevocations): RouteDef[] {
  const sandboxOnly = () => {
    if (environment !== 'sandbox') throw new DomainError('resource_not_found', 'sandbox routes do not exist in the live environment');
  };
  return [
    withBody({
      type: 'object', additionalProperties: false, required: ['email', 'password', 'business_name', 'country_code'],
      properties: {
        email: emailSchema,
        password: { type: 'string', minLength: 10, maxLength: 200 },
        business_name: { type: 'string', minLength: 1, maxLength: 200 },
        country_code: countryCodeSchema,
        kyb_status: { type: 'string', enum: [...KYB_STATUSES] },
        chain_wallet: { type: 'boolean', default: false, description: 'provision a stablecoin wallet' },
        vibans: { type: 'boolean', default: true, description: 'provision USD, EUR and GBP virtual accounts' },
        test_clock_id: { type: 'string', format: 'uuid', description: 'the account lives on this test clock (POST /v1/sandbox/test-clocks): its rules that depend on time read the clock\'s time' },
      },
    }, {
      method: 'POST', path: '/v1/sandbox/accounts', operationId: 'createSandboxAccount', tag: 'sandbox',
      summary: 'Create a sandbox account: returns the account, a secret key (shown once) and a session token',
      auth: { kind: 'public' }, credentialAttempt: { accountField: 'email' },
      response: {
        status: 201, description: 'the account with its vIBANs, its first secret key (shown once) and a session',
        schema: {
          type: 'object', required: ['account', 'vibans', 'api_key', 'session'],
          properties: { account: accountSchema, vibans: { type: 'array', items: vibanSchema }, api_key: apiKeyWithSecretSchema, session: sessionSchema },
        },
      },
      errors: ['resource_already_exists', 'invalid_country_code'],
      errorNotes: { rate_limit_exceeded: ATTEMPTS_NOTE, invalid_request: 'details names the field; test_clock_id: no such test clock' },
      handler: async ({ body }) => {
        sandboxOnly();
        return { status: 201, body: await accounts.createSandboxAccount(body) };
      },
    }),
    withBody({ type: 'object', additionalProperties: false, required: ['kyb_status'], properties: { kyb_status: { type: 'string', enum: [...KYB_STATUSES] } } }, {
      method: 'PATCH', path: '/v1/sandbox/accounts/{id}', operationId: 'updateSandboxAccount', tag: 'sandbox',
      summary: "Set an account's KYB status (master key)",
      auth: { kind: 'admin' }, idempotent: true,
      params: idParams,
      response: { status: 200, description: 'the account; from this answer on, every server applies the new status to its keys', schema: accountSchema },
      errorNotes: { service_unavailable: 'the change could not be made to hold in every server (details "redis"): the status did not change; repeat the request after Retry-After seconds with the same Idempotency-Key' },
      handler: async ({ params, body }) => {
        sandboxOnly();
        return { status: 200, body: await accounts.setKybStatus(params.id, body.kyb_status) };
      },
    }),
    withBody({ type: 'object', additionalProperties: false, required: ['email', 'password'], properties: { email: { type: 'string', maxLength: 254 }, password: { type: 'string', maxLength: 200 } } }, {
      method: 'POST', path: '/v1/auth/sessions', operationId: 'createSession', tag: 'auth',
      summary: 'Sign in with email and password: returns a session JWT',
      auth: { kind: 'public' }, credentialAttempt: { accountField: 'email' },
      response: { status: 201, description: 'the session', schema: sessionSchema },
      errors: ['invalid_credentials'],
      errorNotes: {
        rate_limit_exceeded: `${ATTEMPTS_NOTE}; or sign-in for this email is locked (details "email") after repeated wrong passwords, `
          + 'for a backoff that doubles with each further failure: the right password is refused too until Retry-After seconds have passed',
      },
      handler: async ({ body }) => ({ status: 201, body: await lockout.guard(body.email, () => accounts.signIn(body.email, body.password)) }),
    }),
    {
      method: 'DELETE', path: '/v1/auth/sessions/current', operationId: 'deleteCurrentSession', tag: 'auth',
      summary: 'Sign out: the session token of this request is refused by every server from this answer on',
      auth: { kind: 'session' },
      response: {
        status: 200, description: 'the session is signed out',
        schema: { type: 'object', required: ['signed_out', 'session_expires_at'], properties: { signed_out: { type: 'boolean', const: true }, session_expires_at: { type: 'string', format: 'date-time' } } },
      },
      errorNotes: {
        insufficient_scope: 'the master key: there is no session to sign out (API keys are revoked with DELETE /v1/api-keys/{id})',
        service_unavailable: 'the sign-out could not be recorded (details "postgres"): the session still works; repeat the request after Retry-After seconds',
      },
      handler: async ({ principal }) => {
        const session = principal!.session!; // a session route: the principal is a session
        await signOuts.revoke(session.id, session.expiresAt);
        return { status: 200, body: { signed_out: true, session_expires_at: new Date(session.expiresAt * 1000).toISOString() } };
      },
    },
    {
      method: 'GET', path: '/v1/accounts/me', operationId: 'getMyAccount', tag: 'accounts',
      summary: "The caller's account", auth: { kind: 'key', scope: null, publishable: 'reads' },
      query: { type: 'object', additionalProperties: false, properties: { account_id: accountIdQuerySchema } },
      response: { status: 200, description: 'the account', schema: accountSchema },
      handler: async (request) => {
        const accountId = actingAccountId(request);
        // A credential's own account was read (or taken from the key cache) when it authenticated.
        const own = request.principal!.account;
        return { status: 200, body: own && own.id === accountId ? own : await accounts.getAccount(accountId) };
      },
    },
    {
      method: 'GET', path: '/v1/accounts/me/vibans', operationId: 'listMyVibans', tag: 'accounts',
      summary: 'The virtual IBANs of the caller (dashboard)', auth: { kind: 'dashboard' },
      query: { type: 'object', additionalProperties: false, properties: { account_id: accountIdQuerySchema } },
      response: { status: 200, description: 'the vIBANs', schema: listResponseSchema(vibanSchema) },
      handler: async (request) => {
        const data = await accounts.listVibans(actingAccountId(request));
        return { status: 200, body: { data, has_more: false, next_cursor: null } };
      },
    },
  ];
}
