// The outbox sweeper against the real Postgres and Kafka, with Kafka's answers cut off by a TCP
// proxy on the broker's fault listener (test/support/tcp-proxy.ts): a sweep stuck sending a round
// holds nothing a ledger round needs, so a round on the same accounts that removes the swept
// round's mark (its writer's publisher had it acknowledged meanwhile) commits at once.
import type { Producer } from 'kafkajs';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { entryRow, eventRow } from '../../src/outbox/rows';
import { sweepOutboxOnce } from '../../src/outbox/sweeper';
import { BalanceBook } from '../../ledger/balances';
import { available, faucetEquity } from '../../ledger/chart';
import { decideFaucetCredit } from '../../ledger/commands/faucet-credit';
import { Money } from '../../ledger/money';
import { claimUnpublishedRound } from '../../src/outbox/claims';
import { LedgerRound } from '../../ledger/store/round-transaction';
import type { BatchWrite } from '../../ledger/ports';
import { ensureLedgerAccounts } from '../../ledger/store/reads';
import { createKafka, createProducer } from '../../src/kafka/client';
import { db, testService } from '../hooks';
import { insertAccount } from '../support/seed-ledger';
import { eventually } from '../support/http';
import { TcpProxy } from '../support/tcp-proxy';

const runtime = () => testService().runtime;
/** A round left unpublished this long is one the sweep below takes, and younger than the service's own sweeper takes (15 s). */
const SWEEP_AGE_MS = 5_000;
const LEFT_BEHIND_S = 10;

const newAccount = (): Promise<string> => insertAccount(db(), 'outbox-sweeper');

/** A faucet credit decided and committed as the ledger handler does, its outbox round marked unpublished. */
/** `now`: the round's instant, a test clock's when it decides at one. */
async function credit(accountId: string, amount: string, publishedRounds: string[] = [], now = new Date()): Promise<{ roundId: string; entryId: string }> {
  const refs = [faucetEquity('USD'), available(accountId, 'USD')];
  await ensureLedgerAccounts(db(), refs);
  return LedgerRound.run(db(), async (round) => {
    const book = new BalanceBook((await round.lock({ refs })).balances);
    const decision = decideFaucetCredit(accountId, { entry_id: randomUUID(), currency: 'USD', amount }, book);
    const write: BatchWrite = {
      entries: [], balances: [], newTransfers: [], changedTransfers: [], transitions: [], consumedQuotes: [], newPayments: [], changedPayments: [],
      paymentTransitions: [], processed: [], outbox: [], lateCompletions: [], roundId: randomUUID(), now,
    };
    for (const { entry, postings } of decision.entries) {
      const applied = { id: entry.id, kind: entry.kind, commandId: randomUUID(), transferId: null, quoteId: null, paymentId: null, postings };
      write.entries.push(applied);
      write.outbox.push(entryRow(applied, now));
    }
    write.outbox.push(...decision.events.map((e) => eventRow(e, 'sandbox', now)));
    write.processed.push({ commandId: randomUUID(), type: 'faucet.credit', outcome: JSON.stringify(decision.outcome), accountId: null, idempotencyKey: null, fingerprint: null });
    write.balances = book.changedAccounts();
    await round.commit(write, publishedRounds);
    return { roundId: write.roundId, entryId: write.entries[0].id };
  });
}

async function balance(accountId: string): Promise<string> {
  const row = await db()('ledger_accounts').where('code', available(accountId, 'USD').code).first('balance');
  return new Money(row.balance).toFixed(2);
}

/** Settles with `promise`, or with 'still waiting' after `ms`. */
const within = <T>(promise: Promise<T>, ms: number): Promise<T | 'still waiting'> =>
  Promise.race([promise, new Promise<'still waiting'>((resolve) => { setTimeout(() => resolve('still waiting'), ms).unref(); })]);

describe('outbox sweeper while Kafka does not answer', function () {
  this.timeout(120_000);
  let proxy: TcpProxy;
  let producer: Producer;

  before(async () => {
    const [host, port] = process.env.KAFKA_FAULT_LISTENER!.split(':');
    proxy = await TcpProxy.start(host, Number(port), Number(process.env.KAFKA_FAULT_PROXY_PORT));
    producer = await createProducer(createKafka([`127.0.0.1:${proxy.port}`], 'test-outbox-sweeper'));
  });

  after(async () => {
    await producer?.disconnect().catch(() => undefined);
    await proxy?.stop();
  });

  it('claims a round without holding it: a round on the same account that removes its mark commits at once, and no other sweeper takes it', async () => {
    const accountId = await newAccount();
    const { roundId: leftBehind, entryId } = await credit(accountId, '10.00');
    // The sweep below takes the oldest round first: none other is left behind (the service's sweeper publishes them).
    await eventually(async () => ((await db()('outbox_rounds').whereRaw('created_at < now() - make_interval(secs => ?)', [SWEEP_AGE_MS / 1000]).first()) ? undefined : true),
      30_000, 'no round left behind by earlier tests');
    // Its writer died before publishing it: older than the sweep below looks for.
    await db().raw(`UPDATE outbox_rounds SET created_at = now() - make_interval(secs => ?) WHERE round_id = ?`, [LEFT_BEHIND_S, leftBehind]);

    let sendStarted: (keys: string[]) => void = () => undefined;
    const sending = new Promise<string[]>((resolve) => { sendStarted = resolve; });
    const watched: Producer = {
      ...producer,
      sendBatch: (batch) => {
        sendStarted((batch.topicMessages ?? []).flatMap((t) => t.messages.map((m) => String(m.key))));
        return producer.sendBatch(batch);
      },
    };
    proxy.dropReplies = true;
    const sweep = sweepOutboxOnce({ ...runtime(), producer: watched }, SWEEP_AGE_MS).catch((error: unknown) => error);
    try {
      assert.ok((await sending).includes(entryId), 'the sweep sends the round left behind');
      assert.equal(await claimUnpublishedRound(db(), SWEEP_AGE_MS, 60_000).then((r) => r?.roundId ?? null), null,
        'a second sweeper passes the claimed round over');

      // The writer's publisher got the round acknowledged after all: the next round removes its mark.
      const started = Date.now();
      const next = credit(accountId, '5.00', [leftBehind]);
      assert.notEqual(await within(next, 3_000), 'still waiting', 'the round on the same account does not wait for the sweep\'s send');
      assert.ok(Date.now() - started < 3_000);
      assert.equal(await balance(accountId), '15.00');
      assert.equal(await db()('outbox_rounds').where('round_id', leftBehind).first(), undefined, 'the swept round\'s mark is gone');
    } finally {
      proxy.dropReplies = false;
      await proxy.cut(); // the connections that lost their answers go; the producer reconnects
      await proxy.restore();
      // Bounded: an assertion above that failed is the news, not how long the sweep takes to finish.
      await within(sweep, 30_000);
    }
  });
});

describe('outbox sweeper and the rounds decided at a test clock\'s time', () => {
  // Simulation seed 18: a scheduled run decided at its test clock's time, 82 years ahead, whose
  // writer was killed before publishing; its round was stamped with that time and never looked old
  // enough to the sweeper, so its event never reached Kafka.
  it('sweeps a round decided years ahead of the wall clock once its writer left it behind', async () => {
    const accountId = await newAccount();
    const { roundId } = await credit(accountId, '7.00', [], new Date(Date.UTC(2108, 10, 19, 11, 20, 17)));
    // Any age: a round written before the sweep is older than it by the database's clock, one stamped 2108 never is.
    await sweepOutboxOnce(runtime(), 0);
    assert.equal(await db()('outbox_rounds').where('round_id', roundId).first(), undefined, 'the round reached Kafka and its mark is gone');
  });
});
