// Issue 38, item 3: limits that follow the caller. Sign-in and sign-up are limited per client
// address and per email whatever Authorization header is sent; sign-in locks an email out after
// repeated wrong passwords, with a doubling backoff; a refused credential is an attempt of the
// address; an unknown API key costs one Postgres lookup, not one per request. A service of its
// own runs with the default burst of attempts (the test processes raise it: support/secrets.ts),
// refilled too slowly for a token to come back during a test, and a lockout no test outlasts;
// a second one locks out briefly, for the tests that wait a lockout out. Each has a Redis prefix
// of its own. So every count below is exact, however slow the machine.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { hashApiKey } from '../../src/auth/credentials';
import { testService } from '../hooks';
import { signUp, TEST_PASSWORD, uniqueEmail } from '../support/accounts';
import { expectError } from '../support/expect';
import { call, eventually, type JsonResponse } from '../support/http';
import { startService, type TestService } from '../support/service';

const ATTEMPT_BURST = 20;
/** One attempt back every 1000 s: none within a test's timeout (120 s). */
const ATTEMPT_RATE_PER_SECOND = '0.001';
const FREE_FAILURES = 5;
/** Longer than a test's timeout: no lockout of `limited` ends during its test. */
const LOCKOUT_MS_LONG = 600_000;
/** The lockout of `briefly`, waited out by its tests: doubled, it still says so after a second's delay. */
const LOCKOUT_MS = 2_000;

const randomHeader = () => ({ authorization: `Bearer ${randomBytes(18).toString('base64url')}` });
const randomKey = () => `sk_sandbox_${randomBytes(24).toString('base64url').replace(/[-_]/g, 'x').slice(0, 32)}`;

function retryAfter(response: JsonResponse): number {
  const value = response.headers.get('retry-after');
  assert.ok(value !== null && /^\d+$/.test(value) && Number(value) >= 1, `Retry-After is ${value}`);
  return Number(value);
}

describe('credential attempts and sign-in lockout (issue 38)', function () {
  this.timeout(120_000);
  let limited: TestService;
  let briefly: TestService;
  const limits = (name: string, lockoutMs: number) => ({
    ROLES: 'api',
    REDIS_KEY_PREFIX: `${testService().config.redisKeyPrefix}${name}:`,
    ATTEMPT_RATE_LIMIT_RPS: ATTEMPT_RATE_PER_SECOND, ATTEMPT_RATE_LIMIT_BURST: String(ATTEMPT_BURST),
    SIGN_IN_FREE_FAILURES: String(FREE_FAILURES), SIGN_IN_LOCKOUT_MS: String(lockoutMs), SIGN_IN_LOCKOUT_MS_MAX: String(lockoutMs * 4),
  });

  before(async function () {
    this.timeout(90_000);
    [limited, briefly] = await Promise.all([startService(limits('attempts', LOCKOUT_MS_LONG)), startService(limits('lockouts', LOCKOUT_MS))]);
  });
  after(async function () {
    this.timeout(30_000);
    await limited?.stop();
    await briefly?.stop();
  });
  // Each test starts with the address's attempts whole (all requests come from 127.0.0.1).
  beforeEach(async () => {
    for (const service of [limited, briefly]) await service.runtime.redis.del('rl:attempts:ip:127.0.0.1');
  });

  const signInTo = (service: TestService, email: string, password: string) =>
    call(service.baseUrl, 'POST', '/v1/auth/sessions', { email, password }, { headers: randomHeader() });
  const signIn = (email: string, password: string) => signInTo(limited, email, password);
  const signInBriefly = (email: string, password: string) => signInTo(briefly, email, password);

  it('answers 50 sign-in guesses under random Authorization headers 429 once the email is locked out', async () => {
    const owner = await signUp(testService().baseUrl);
    const answers: JsonResponse[] = [];
    for (let i = 0; i < 50; i++) answers.push(await signIn(owner.email, `wrong password ${i}`));
    const statuses = answers.map((r) => r.status);
    assert.deepEqual(statuses.slice(0, FREE_FAILURES), Array(FREE_FAILURES).fill(401), statuses.join(','));
    assert.deepEqual(statuses.slice(FREE_FAILURES), Array(50 - FREE_FAILURES).fill(429), statuses.join(','));
    for (const answer of answers.slice(FREE_FAILURES)) {
      expectError(answer, 429, 'rate_limit_exceeded');
      retryAfter(answer);
    }
  });

  it('refuses the right password while the email is locked out and takes it after the backoff', async () => {
    const owner = await signUp(testService().baseUrl);
    for (let i = 0; i < FREE_FAILURES; i++) expectError(await signInBriefly(owner.email, 'not the password'), 401, 'invalid_credentials');
    const locked = await signInBriefly(owner.email, TEST_PASSWORD);
    expectError(locked, 429, 'rate_limit_exceeded', 'email');
    const waitSeconds = retryAfter(locked);
    assert.ok(waitSeconds <= Math.ceil(LOCKOUT_MS / 1000), `Retry-After ${waitSeconds} s`);
    // Another email from the same address is not locked.
    const other = await signUp(testService().baseUrl);
    assert.equal((await signInBriefly(other.email, TEST_PASSWORD)).status, 201);

    await new Promise((resolve) => setTimeout(resolve, waitSeconds * 1000 + 100));
    const signedIn = await signInBriefly(owner.email, TEST_PASSWORD);
    assert.equal(signedIn.status, 201, JSON.stringify(signedIn.body));
    // A success clears the count: the next wrong password is one of five again.
    expectError(await signInBriefly(owner.email, 'not the password'), 401, 'invalid_credentials');
  });

  it('doubles the lockout with the first wrong password after it ends', async () => {
    const owner = await signUp(testService().baseUrl);
    for (let i = 0; i < FREE_FAILURES; i++) expectError(await signInBriefly(owner.email, 'not the password'), 401, 'invalid_credentials');
    const first = retryAfter(await signInBriefly(owner.email, TEST_PASSWORD));
    await new Promise((resolve) => setTimeout(resolve, first * 1000 + 100));
    expectError(await signInBriefly(owner.email, 'still not the password'), 401, 'invalid_credentials');
    const second = await signInBriefly(owner.email, TEST_PASSWORD);
    expectError(second, 429, 'rate_limit_exceeded', 'email');
    const waitSeconds = retryAfter(second);
    assert.ok(waitSeconds > Math.ceil(LOCKOUT_MS / 1000) && waitSeconds <= (2 * LOCKOUT_MS) / 1000, `Retry-After ${waitSeconds} s after the first lockout of ${first} s`);
  });

  it('limits sign-in and sign-up per client address, whatever email and header each names', async () => {
    const taken = (await signUp(testService().baseUrl)).email;
    const answers: JsonResponse[] = [];
    for (let i = 0; i < 50; i++) {
      answers.push(i % 2 === 0 ? await signIn(uniqueEmail('guess'), 'a guessed password')
        : await call(limited.baseUrl, 'POST', '/v1/sandbox/accounts', { email: taken, password: TEST_PASSWORD, business_name: 'B', country_code: 'GB' }, { headers: randomHeader() }));
    }
    // No attempt comes back during the test: the burst is served, and every request after it refused.
    const statuses = answers.map((r) => r.status);
    assert.ok(statuses.slice(0, ATTEMPT_BURST).every((s) => s === 401 || s === 409), statuses.join(','));
    const refused = answers.slice(ATTEMPT_BURST);
    assert.deepEqual(refused.map((r) => r.status), Array(50 - ATTEMPT_BURST).fill(429), statuses.join(','));
    for (const answer of refused) {
      expectError(answer, 429, 'rate_limit_exceeded');
      retryAfter(answer);
    }
  });

  it('counts refused credentials per address: random API keys are answered 429 once the attempts are spent', async () => {
    // A key in use is in the key cache; once the address has spent its attempts, only such keys
    // (and sessions) are served: a key not cached would cost the lookup being limited.
    const owner = await signUp(testService().baseUrl);
    assert.equal((await call(limited.baseUrl, 'GET', '/v1/customers', undefined, { token: owner.key })).status, 200);
    await eventually(async () => ((await limited.runtime.redis.get(`auth:key:v2:${hashApiKey(owner.key)}`))?.startsWith('{') ? true : undefined), 5_000, 'the key\'s cache entry');
    const statuses: number[] = [];
    for (let i = 0; i < ATTEMPT_BURST + 10; i++) statuses.push((await call(limited.baseUrl, 'GET', '/v1/customers', undefined, { token: randomKey() })).status);
    // No attempt comes back during the test: each key of the burst is looked up and refused, every later one 429.
    assert.deepEqual(statuses, [...Array(ATTEMPT_BURST).fill(401), ...Array(10).fill(429)], statuses.join(','));
    // A valid key of the same address is still served.
    assert.equal((await call(limited.baseUrl, 'GET', '/v1/customers', undefined, { token: owner.key })).status, 200);
  });

  it('looks an unknown API key up in Postgres once, however often it is repeated', async () => {
    const key = randomKey();
    const hash = hashApiKey(key);
    const lookups: string[] = [];
    const spy = (query: { sql: string; bindings?: unknown[] }) => {
      if (query.sql.includes('api_keys') && (query.bindings ?? []).includes(hash)) lookups.push(query.sql);
    };
    const { db, redis } = testService().runtime;
    db.on('query', spy);
    try {
      expectError(await call(testService().baseUrl, 'GET', '/v1/customers', undefined, { token: key }), 401, 'invalid_api_key');
      await eventually(async () => ((await redis.get(`auth:key:v2:${hash}`))?.startsWith('!unknown:') ? true : undefined), 5_000, 'the unknown key\'s marker');
      for (let i = 0; i < 20; i++) expectError(await call(testService().baseUrl, 'GET', '/v1/customers', undefined, { token: key }), 401, 'invalid_api_key');
    } finally {
      db.off('query', spy);
    }
    assert.equal(lookups.length, 1, lookups.join('\n'));
  });
  it('locks an email out under every spelling of it, and no spelling that Postgres and JavaScript lower-case apart signs in past the lockout', async () => {
    // Only 0-9a-f after the i's: the address's one letter with a story is the i.
    const email = `iii-${randomBytes(8).toString('hex')}@example.test`;
    await signUp(testService().baseUrl, { email });
    for (let i = 0; i <= FREE_FAILURES; i++) await signIn(email, `wrong password ${i}`);
    expectError(await signIn(email, TEST_PASSWORD), 429, 'rate_limit_exceeded');
    // Full-width letters and capitals are the same address (NFKC, lower-cased): locked too.
    for (const spelling of [email.toUpperCase(), email.replace('iii', 'ｉｉｉ'), email.replace('iii', 'ＩＩＩ')]) {
      expectError(await signIn(spelling, TEST_PASSWORD), 429, 'rate_limit_exceeded');
    }
    // Postgres lower-cases a dotted capital I to i, JavaScript to i and a combining dot: the
    // lookup once took the first and the lockout the second, and this signed in. It names no account.
    const dotted = email.replace('iii', 'İİİ');
    const { rows } = await testService().runtime.db.raw('SELECT lower(?) = ? AS same', [dotted, email]);
    assert.equal(rows[0].same, true, "this database's lower() makes the dotted I an i (the case this test is for)");
    expectError(await signIn(dotted, TEST_PASSWORD), 401, 'invalid_credentials');
  });
});
