// The simulation's checks (test/simulation/) fail when they should: each is fed a corrupted
// observation once (a stream with a gap, a balance off by a cent, money still pending, a bad error
// body, a 500, a refusal the model cannot explain) and a sound one. And a seed gives the same plan.
// Pure: no service needed.
import assert from 'node:assert/strict';
import { Money } from '../../ledger/money';
import { balanceProblems, settlementTotals, streamProblem } from '../simulation/checks';
import { Findings } from '../simulation/findings';
import { checkAnswer, errorBodyProblem } from '../simulation/http';
import { idInForm, ILLEGAL_FORMS, LEGAL_FORMS } from '../simulation/ids';
import { balanceKey, Model, type Command } from '../simulation/model';
import { prng } from '../support/prng';
import { classOf, clientOps, CLOCK_STEP_MS_MAX, FAULT_CLASSES, faultSchedule, NOMINAL_OPS_PER_S, PARTNERS } from '../simulation/plan';
import { availableKey, endHold, heldKey } from '../simulation/wallet-ops';

const A = '0f8fad5b-d9cb-469f-a165-70867728950e';
const B = '7c9e6679-7425-40de-944b-e07fc1f90ae7';
const d = (account: string, currency: string, amount: string) => ({ account, currency, amount: new Money(amount) });
const first = <T>(gen: Generator<T>, n: number): T[] => Array.from({ length: n }, () => gen.next().value);

describe('simulation checks', () => {
  it('a stream is gapless and in order, or the check says where it is not', () => {
    assert.equal(streamProblem([1, 2, 3], 3), null);
    assert.match(streamProblem([1, 2, 4], 4)!, /event 3 of the stream has account_seq 4/);
    assert.match(streamProblem([1, 3, 2], 3)!, /account_seq 3/);
    assert.match(streamProblem([1, 2], 3)!, /saw 2 of 3 events/);
    assert.match(streamProblem([1, 1, 2], 2)!, /account_seq 1/);
  });

  it("a balance off the model's by one cent, or still pending, is a failure", () => {
    const model = new Model();
    model.answer(model.begin(0, 'faucet', []), [d(A, 'USD', '100.00')]);
    model.answer(model.begin(0, 'transfer', []), [d(A, 'USD', '-10.01'), d(B, 'USD', '10.01')]);
    const sound = [{ account: A, currency: 'USD', available: '89.99', pending: '0' }, { account: B, currency: 'USD', available: '10.01', pending: '0' }];
    assert.deepEqual(balanceProblems(model, [A, B], sound), []);
    assert.equal(balanceProblems(model, [A, B], [{ ...sound[0], available: '90.00' }, sound[1]]).length, 1);
    assert.equal(balanceProblems(model, [A, B], [sound[0], { ...sound[1], pending: '0.01' }]).length, 1);
    assert.match(balanceProblems(model, [A, B], [sound[0]])[0], /no balance/);
  });

  it('stablecoins roll into their settlement currency, as the balance route gives them', () => {
    const model = new Model();
    model.answer(model.begin(0, 'faucet', []), [d(A, 'USD', '1.00'), d(A, 'USDC', '2.500000'), d(A, 'EUR', '3')]);
    const totals = settlementTotals(model, A);
    assert.equal(totals.get('USD')!.toFixed(), '3.5');
    assert.equal(totals.get('EUR')!.toFixed(), '3');
  });

  it('the range of a balance holds every undecided command, and leaves out the one being checked', () => {
    const model = new Model();
    model.answer(model.begin(0, 'faucet', []), [d(A, 'USD', '50')]);
    const undecided = model.begin(0, 'transfer out', [d(A, 'USD', '-30'), d(B, 'USD', '30')]);
    const checked = model.begin(0, 'another', [d(A, 'USD', '-40')]);
    assert.deepEqual(Object.values(model.range(A, 'USD', checked)).map((x) => x.toFixed()), ['20', '50']);
    // A 422 insufficient_funds for 40 fits (the balance may be 20); one for 10 would not (it is at least 20).
    assert.ok(model.range(A, 'USD', checked).lo.isLessThan(40));
    assert.ok(!model.range(A, 'USD', checked).lo.isLessThan(10));
    model.refuse(undecided);
    assert.equal(model.range(A, 'USD', checked).lo.toFixed(), '50');
    assert.deepEqual(model.undecided(), [checked]);
  });

  it("a balance's range and certain balances, read from its own commands, equal a reading of every command (seeded)", () => {
    // What range() computed before it kept each balance's commands apart: every command read.
    const scan = (model: Model, account: string, currency: string, except?: Command) => {
      let [lo, hi] = [new Money(0), new Money(0)];
      for (const command of model.commands) {
        if (command === except) continue;
        const certain = !except || command.learnedAt < except.begunAt;
        for (const x of command.certain.filter((y) => y.account === account && y.currency === currency)) {
          if (certain || x.amount.isNegative()) lo = lo.plus(x.amount);
          if (certain || !x.amount.isNegative()) hi = hi.plus(x.amount);
        }
        for (const x of command.possible.filter((y) => y.account === account && y.currency === currency)) {
          if (x.amount.isNegative()) lo = lo.plus(x.amount); else hi = hi.plus(x.amount);
        }
      }
      return { lo: lo.toFixed(), hi: hi.toFixed() };
    };
    for (let seed = 1; seed <= 8; seed++) {
      const random = prng(seed);
      const pick = <T>(list: T[]): T => list[Math.floor(random() * list.length)];
      const delta = () => d(pick([A, B]), pick(['USD', 'EUR']), (Math.floor(random() * 20_001) / 100 - 100).toFixed(2));
      const deltas = () => Array.from({ length: Math.floor(random() * 3) }, delta);
      const model = new Model();
      for (let step = 0; step < 200; step++) {
        const open = model.commands.filter((c) => c.state === 'undecided' || c.state === 'open');
        const roll = random();
        if (roll < 0.4 || open.length === 0) model.begin(0, `c${step}`, deltas());
        else if (roll < 0.65) model.answer(pick(open), deltas(), random() < 0.3 ? deltas() : []);
        else if (roll < 0.8) model.end(pick(open), deltas());
        else if (roll < 0.9) model.refuse(pick(open));
        const except = random() < 0.5 ? pick(model.commands) : undefined;
        const [account, currency] = [pick([A, B]), pick(['USD', 'EUR'])];
        const range = model.range(account, currency, except);
        assert.deepEqual({ lo: range.lo.toFixed(), hi: range.hi.toFixed() }, scan(model, account, currency, except), `seed ${seed} step ${step}`);
        const certain = (c: Command) => c.certain.filter((x) => x.account === account && x.currency === currency);
        const moved = model.commands.flatMap(certain);
        const sum = moved.reduce((total, x) => total.plus(x.amount), new Money(0)).toFixed();
        assert.equal(model.balance(account, currency).toFixed(), sum, `seed ${seed} step ${step}`);
        assert.equal(model.balances().get(balanceKey(account, currency))?.toFixed(), moved.length > 0 ? sum : undefined, `seed ${seed} step ${step}`);
      }
    }
  });

  it('a refusal learned late is judged by what was certain when it was sent, not by credits learned since', () => {
    const model = new Model();
    model.answer(model.begin(0, 'faucet', []), [d(A, 'USD', '12')]);
    const hold = model.begin(0, 'hold 36 (answer lost, learned at the end)', [d(A, 'USD', '-36')]);
    model.answer(model.begin(0, 'wallet transfer in', []), [d(A, 'USD', '46')]);
    model.answer(model.begin(0, 'wallet transfer out', []), [d(A, 'USD', '-50')]);
    // The credit may have come after the hold was decided: 422 insufficient_funds for 36 fits.
    assert.deepEqual(Object.values(model.range(A, 'USD', hold)).map((x) => x.toFixed()), ['-38', '58']);
    assert.ok(model.range(A, 'USD', hold).lo.isLessThan(36));
    // For a command begun now, both are certain (the hold still undecided).
    assert.deepEqual(Object.values(model.range(A, 'USD', model.begin(0, 'now', []))).map((x) => x.toFixed()), ['-28', '8']);
  });

  it('an error body as SPEC.md section 7 gives it, and no 5xx but a 503 with Retry-After', () => {
    assert.equal(errorBodyProblem({ success: false, error: 'invalid_request', message: 'x', details: 'id' }), null);
    assert.equal(errorBodyProblem({ success: false, error: 'invalid_request', message: 'x', details: null }), null);
    assert.ok(errorBodyProblem({ success: false, error: 'invalid_request', message: 'x' }));
    assert.ok(errorBodyProblem({ error: 'invalid_request', message: 'x', details: null }));
    assert.ok(errorBodyProblem('Internal Server Error'));
    const findings = new Findings(false);
    const body = { success: false, error: 'partner_unavailable', message: 'x', details: null };
    checkAnswer(findings, 0, 'POST /v1/transfers', { status: 503, body, retryAfter: '1' });
    assert.equal(findings.failures.length, 0);
    checkAnswer(findings, 0, 'POST /v1/transfers', { status: 503, body, retryAfter: null });
    checkAnswer(findings, 0, 'GET /v1/transfers/x', { status: 500, body: { ...body, error: 'internal_error' }, retryAfter: null });
    checkAnswer(findings, 0, 'POST /v1/payments/send', { status: 502, body: { ...body, error: 'partner_error' }, retryAfter: null });
    assert.equal(findings.failures.length, 3);
    checkAnswer(findings, 0, 'POST /v1/payments/send', { status: 502, body: { ...body, error: 'partner_error' }, retryAfter: null }, 'error');
    assert.equal(findings.failures.length, 3);
  });

  it('id forms: the legal ones are the same UUID in another case, the illegal ones are not a UUID', () => {
    const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
    for (const form of LEGAL_FORMS) assert.equal(idInForm(A, form).toLowerCase(), A);
    for (const form of ILLEGAL_FORMS) assert.ok(!uuid.test(idInForm(A, form)), form);
  });

  it('a seed gives every client the same operations and the same faults', () => {
    assert.deepEqual(first(clientOps(7, 2, 6), 200), first(clientOps(7, 2, 6), 200));
    assert.notDeepEqual(first(clientOps(7, 2, 6), 50), first(clientOps(8, 2, 6), 50));
    assert.notDeepEqual(first(clientOps(7, 2, 6), 50), first(clientOps(7, 3, 6), 50));
    assert.deepEqual(faultSchedule(7, 600_000, 'on'), faultSchedule(7, 600_000, 'on'));
    assert.deepEqual(faultSchedule(7, 600_000, 'off'), []);
    // Without servers: the processes, the run's Redis keys and partner outages.
    assert.ok(faultSchedule(7, 600_000, 'processes').every((f) => ['ledger', 'ledger2', 'api', 'workers', 'rails', 'api_kafka', 'ledger_postgres', 'redis_keys', ...PARTNERS].includes(f.target)));
    for (const op of first(clientOps(7, 2, 6), 500)) if ('to' in op && typeof op.to === 'number') assert.ok(op.to !== 2 && op.to >= 0 && op.to < 6);
  });

  it('--short injects every class of fault once, in a seeded order within the run; a long run draws clock steps among the rest', () => {
    const shortMs = (6_000 * 1_000) / NOMINAL_OPS_PER_S;
    for (let seed = 1; seed <= 20; seed++) {
      const tour = faultSchedule(seed, shortMs, 'on', true);
      assert.deepEqual(tour.map(classOf).sort(), [...FAULT_CLASSES].sort(), `seed ${seed}`);
      assert.ok(tour.every((f, i) => f.atOp > 0 && f.atOp < 6_000 && (i === 0 || f.atOp > tour[i - 1].atOp)), `seed ${seed}: in order, within the run`);
      assert.deepEqual(faultSchedule(seed, shortMs, 'processes', true).map(classOf).sort(), FAULT_CLASSES.filter((c) => !c.startsWith('server_')).sort());
    }
    assert.notDeepEqual(faultSchedule(1, shortMs, 'on', true).map(classOf), faultSchedule(2, shortMs, 'on', true).map(classOf));
    const steps = faultSchedule(11, 3_600_000, 'on').filter((f) => f.action === 'clock_step');
    assert.ok(steps.length >= 3 && steps.some((f) => f.stepMs! < 0) && steps.some((f) => f.stepMs! > 0), 'steps both ways in an hour');
    assert.ok(steps.every((f) => Math.abs(f.stepMs!) >= 1_000 && Math.abs(f.stepMs!) <= CLOCK_STEP_MS_MAX && f.target !== 'rails'));
  });

  it('a seed sends wallets and holds among its traffic: creation, transfers, holds short and long, captures, voids and races', () => {
    const ops = first(clientOps(7, 2, 6), 2_000);
    const kinds = new Set(ops.map((op) => op.kind));
    for (const kind of ['wallet_create', 'wallet_transfer', 'hold', 'capture', 'void', 'capture_void_race', 'captures_race']) assert.ok(kinds.has(kind as any), kind);
    const holds = ops.filter((op) => op.kind === 'hold');
    assert.ok(holds.some((op) => op.expiresInS < 60) && holds.some((op) => op.expiresInS >= 3_600), 'some holds expire within the run, some outlive it');
    assert.ok(holds.some((op) => op.onWallet) && holds.some((op) => !op.onWallet), 'holds on main and on wallets');
    const routes = new Set(ops.flatMap((op) => (op.kind === 'wallet_transfer' ? [op.route] : [])));
    assert.deepEqual([...routes].sort(), ['between', 'in', 'other', 'out']);
  });

  it('a seed sends transfer batches and balance alerts: atomic and not, every item kind, alerts below and above, made and deleted', () => {
    const ops = first(clientOps(7, 2, 6), 3_000);
    const batches = ops.flatMap((op) => (op.kind === 'batch' ? [op] : []));
    assert.ok(batches.some((op) => op.atomic) && batches.some((op) => !op.atomic), 'atomic batches and others');
    assert.ok(batches.some((op) => op.items.length > 20), 'some batches of many items');
    const itemKinds = new Set(batches.flatMap((op) => op.items.map((item) => item.kind)));
    assert.deepEqual([...itemKinds].sort(), ['bank', 'chain', 'internal', 'nobody', 'self', 'too_much', 'unknown_bank']);
    const alerts = ops.flatMap((op) => (op.kind === 'alert_create' ? [op] : []));
    assert.ok(alerts.some((op) => op.direction === 'below') && alerts.some((op) => op.direction === 'above'), 'alerts below and above');
    assert.ok(alerts.some((op) => op.onWallet) && ops.some((op) => op.kind === 'alert_delete'), 'alerts on wallets, and deletes');
    // Adversarial inputs: batches of hundreds of items with long notes, and floods of alerts past a balance's limit.
    assert.ok(batches.some((op) => op.items.length >= 200) && batches.every((op) => op.items.length <= 1_000), 'some batches of 200 to 1,000 items');
    const notes = batches.flatMap((op) => op.items.flatMap((item) => (item.note === null ? [] : [item.note])));
    assert.ok(notes.some((n) => n.length > 200) && notes.every((n) => n.length <= 300) && notes.some((n) => /[^\x00-\x7f]/.test(n)), 'notes up to 300 characters, some beyond ASCII');
    const floods = ops.flatMap((op) => (op.kind === 'alert_flood' ? [op] : []));
    assert.ok(floods.length > 0 && floods.every((op) => op.count > 20 && op.count <= 1_000), 'floods of alerts past the limit of 20');
    const reversals = ops.flatMap((op) => (op.kind === 'reverse' ? [op] : []));
    assert.ok(reversals.some((op) => op.full) && reversals.some((op) => op.race) && reversals.some((op) => op.share > 1), 'reversals of all that is left, racing, and of more than is left');
  });

  it("a hold's release moves back once, to its side; ending it again another way is a failure", () => {
    const model = new Model();
    const findings = new Findings(false);
    const world = { model, findings, members: [{ accountId: A }] } as any;
    const wallet = B;
    const command = model.begin(0, 'hold', []);
    model.answer(command, [d(availableKey({ accountId: A }, wallet), 'USD', '-10.00'), d(heldKey({ accountId: A }, wallet), 'USD', '10.00')],
      [d(heldKey({ accountId: A }, wallet), 'USD', '-10.00'), d(availableKey({ accountId: A }, wallet), 'USD', '10.00')]);
    const hold = { id: B, client: 0, side: wallet, currency: 'USD', amount: new Money('10.00'), expiresAt: 0, command, captures: [], enders: [], ended: null };
    endHold(world, hold, 'voided', '4.00');
    assert.equal(model.undecided().length, 0);
    assert.equal(model.balances().get(`wallet:${B}|USD`)!.toFixed(2), '-6.00');
    assert.equal(model.balances().get(`wallet:${B}:held|USD`)!.toFixed(2), '6.00');
    assert.equal(model.balances().get(`${A}|USD`), undefined, "a wallet's hold leaves the main balance alone");
    endHold(world, hold, 'voided', '4.00');
    assert.equal(findings.failures.length, 0);
    assert.equal(model.balances().get(`wallet:${B}:held|USD`)!.toFixed(2), '6.00', 'released once');
    endHold(world, hold, 'captured', '0');
    assert.deepEqual(findings.failures.map((f) => f.check), ["every hold's state as the model predicts"]);
  });
});
