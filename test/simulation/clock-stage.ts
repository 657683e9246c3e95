// The set-up of the accounts on test clocks, the same in a run and in its replay: the plan's
// clocks made at their seeded instants (no credential, as DESIGN.md section 5i allows), its
// accounts signed up on them, each funded in every fiat currency; and their names in the trace,
// so that a replay sends a traced request with its own run's clock, account and credential.
import { Money } from '../../ledger/money';
import { signUp } from '../support/accounts';
import { ClockModel } from './clock-model';
import { clockPlan } from './clock-plan';
import { KeySource } from './keys';
import { streamSeed } from './plan';
import type { Names } from './trace';
import type { ClockAccount, SimClocks, World } from './world';
import { money } from './writes';

const FUNDING_CENTS = 100_000;

export async function setUpClocks(world: World, seed: number, clients: number): Promise<SimClocks> {
  const plan = clockPlan(seed);
  const ids: string[] = [];
  const accounts: ClockAccount[] = [];
  for (const [clock, { startMs, accounts: count }] of plan.clocks.entries()) {
    const made = await world.http.send(clients, 'POST', '/v1/sandbox/test-clocks', { frozen_time: new Date(startMs).toISOString(), name: `simulation ${clock}` });
    if (typeof made === 'string' || made.status !== 201) throw new Error(`test clock not made: ${JSON.stringify(made)}`);
    ids.push(made.body.id);
    for (let i = 0; i < count; i++) {
      const signed = await signUp(world.http.baseUrl, { test_clock_id: made.body.id });
      accounts.push({ index: accounts.length, clock, accountId: signed.account.id, email: signed.email, key: signed.key });
    }
  }
  const model = new ClockModel(plan.clocks.map((c) => c.startMs), accounts.map((a) => a.clock));
  const clocks: SimClocks = {
    client: clients, ids, accounts, model, keys: new KeySource(streamSeed(seed, 3_002)), lost: null, opIndex: 0,
    stats: { advances: 0, expired: 0, runsCreated: 0, runsRefused: 0, quotesExpired: 0, holdsRefused: 0 },
  };
  for (const account of accounts) {
    for (const currency of ['USD', 'EUR', 'GBP']) {
      const amount = money(FUNDING_CENTS);
      const answer = await world.http.decide(clients, '/v1/sandbox/faucet', { currency, amount }, clocks.keys.uuid(), { token: account.key });
      if (answer?.status !== 200 && answer?.status !== 201) throw new Error(`clock account ${account.index} not funded: ${JSON.stringify(answer)}`);
      model.fund(account.index, currency, new Money(amount));
    }
  }
  return clocks;
}

/** The clocks' and their accounts' values under the same names in every run. */
export function bindClocks(names: Names, clocks: SimClocks | null): void {
  clocks?.ids.forEach((id, i) => names.bind(`k${i}.clock`, id));
  for (const account of clocks?.accounts ?? []) {
    const k = `k${account.clock}.a${account.index}`;
    names.bind(`${k}.account`, account.accountId);
    names.bind(`${k}.email`, account.email, true);
    names.bindCredential(`${k}.key`, account.key);
  }
}
