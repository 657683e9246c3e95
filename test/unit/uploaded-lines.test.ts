// An uploaded statement's lines are named by their content (issue 49, items 1 and 2): two exports
// of one day, with other ids, order, line endings and ways of writing an amount ("123.4",
// "123.40"; "100", "100.00"), give the lines they share the same content name, and stage every
// amount at its currency's scale. Seeded: a generated day is rendered twice, differently, and the
// names compared. (The count that tells two lines of one content apart, `<content>:<n>`, is added
// once staged, in Postgres: test/integration/reconciliation-lasting-matches.test.ts.)
import assert from 'node:assert/strict';
import { CURRENCY_SCALE, Money, type Currency } from '../../ledger/money';
import type { StagedLine } from '../../src/reconciliation/run';
import { statementCsvChunks } from '../../src/reconciliation/statement-csv';
import { prng } from '../support/prng';
import { namingSeed, replayOf, seeds } from '../support/seeds';

interface Line { reference: string; currency: Currency; amount: string; fee: string; valueDate: string; settles: string[] }

async function staged(csv: string): Promise<StagedLine[]> {
  const lines: StagedLine[] = [];
  for await (const chunk of statementCsvChunks(csv, 7)) lines.push(...chunk);
  return lines;
}

/** `amount` as a partner might write it: at its scale, or with its trailing zeros dropped. */
function written(amount: string, short: boolean): string {
  return short ? new Money(amount).toFixed() : amount;
}

function render(lines: Line[], random: () => number, idPrefix: string): string {
  const order = lines.map((line, i) => ({ line, key: random(), i })).sort((a, b) => a.key - b.key);
  const eol = random() < 0.5 ? '\r\n' : '\n';
  const rows = order.map(({ line, i }) => [
    `${idPrefix}${i}`, line.reference, written(line.amount, random() < 0.5), line.currency, written(line.fee, random() < 0.5), line.valueDate, line.settles.join(' '),
  ].join(','));
  return ['id,reference,amount,currency,fee,value_date,settles', ...rows].join(eol) + (random() < 0.5 ? eol : '');
}

function generate(random: () => number): Line[] {
  const pick = <T>(items: readonly T[]) => items[Math.floor(random() * items.length)];
  const lines: Line[] = [];
  for (let i = 0, n = 1 + Math.floor(random() * 30); i < n; i += 1) {
    const currency = pick(['USD', 'EUR', 'USDC'] as const);
    const scale = CURRENCY_SCALE[currency];
    // Whole amounts, amounts ending in 0, and any other, so that shortened forms differ.
    const units = pick([100, 12_340, 97_37, Math.floor(random() * 1_000_000)]) * 10 ** (scale - 2);
    const amount = new Money(units).shiftedBy(-scale).toFixed(scale);
    const line: Line = {
      reference: random() < 0.4 ? '' : `ref-${Math.floor(random() * 5)}`, currency, amount,
      fee: random() < 0.3 ? new Money(10 ** (scale - 1)).shiftedBy(-scale).toFixed(scale) : new Money(0).toFixed(scale),
      valueDate: pick(['2026-03-01', '2026-03-02']), settles: random() < 0.1 ? [`ref-${Math.floor(random() * 5)}`] : [],
    };
    lines.push(line);
    if (random() < 0.2) lines.push({ ...line }); // the same content twice in one export
  }
  return lines;
}

describe('uploaded statement lines, named by their content', () => {
  it('stages amounts at the currency\'s scale however they are written', async () => {
    const [whole, short] = await staged('id,amount,currency,value_date\na,100,USD,2026-03-01\nb,123.4,USDC,2026-03-01\n');
    assert.deepEqual([whole.amount, whole.net, whole.fee], ['100.00', '100.00', '0.00']);
    assert.deepEqual([short.amount, short.net], ['123.400000', '123.400000']);
  });

  it('names a line the same in another export of the day (other ids, order, line endings, amounts written short)', async () => {
    const first = await staged('id,reference,amount,currency,value_date\n1,r-1,10.5,USD,2026-03-01\n2,,7.00,USD,2026-03-01\n3,,7,USD,2026-03-01\n');
    const again = await staged('id,reference,amount,currency,value_date\r\nx,,7.00,USD,2026-03-01\r\ny,extra,1.00,USD,2026-03-01\r\nz,r-1,10.50,USD,2026-03-01\r\nw,,7.0,USD,2026-03-01\r\n');
    assert.match(first[0].lineId, /^upload-[0-9a-f]{16}$/);
    assert.equal(first[1].lineId, first[2].lineId, 'one content, one name (told apart by their count once staged)');
    assert.deepEqual([again[2].lineId, again[0].lineId, again[3].lineId], [first[0].lineId, first[1].lineId, first[1].lineId]);
    assert.ok(!first.some((l) => l.lineId === again[1].lineId), 'another content, another name');
  });

  it('names a batch line by its reference and day, not its amounts, so a batch that grows stays the same line', async () => {
    const [before] = await staged('id,reference,amount,currency,value_date,settles\n1,b-7,200.00,USD,2026-03-01,p1 p2\n');
    const [after] = await staged('id,reference,amount,currency,value_date,settles\n9,b-7,300.00,USD,2026-03-01,p1 p2 p3\n');
    assert.equal(after.lineId, before.lineId);
  });

  for (const seed of seeds([3, 41, 977])) {
    it(`names every shared line alike in two renderings of a generated day (seed ${seed}, ${replayOf(seed)})`, () => namingSeed(seed, async () => {
      for (let day = 0; day < 200; day += 1) {
        const random = prng(seed * 1_000 + day);
        const lines = generate(random);
        const extra = generate(random).slice(0, 3);
        const [one, two] = [await staged(render(lines, random, 'a')), await staged(render([...lines, ...extra], random, 'b'))];
        // The model: a line's name is its content; two exports name a content alike, the second
        // as often as the first and once more for each extra line of that content.
        const contentOf = (l: Pick<StagedLine, 'reference' | 'currency' | 'amount' | 'fee' | 'valueDate' | 'settles'>) =>
          [l.reference ?? '', l.currency, l.settles === null || l.settles.length === 0 ? `${l.amount}|${l.fee}` : 'batch', l.valueDate].join('|');
        const byName = (lines: StagedLine[]) => {
          const names = new Map<string, { content: string; n: number }>();
          for (const l of lines) {
            assert.equal(l.amount, new Money(l.amount).toFixed(CURRENCY_SCALE[l.currency]), `day ${day}: ${l.amount} at the scale of ${l.currency}`);
            const named = names.get(l.lineId);
            if (named) assert.equal(named.content, contentOf(l), `day ${day}: ${l.lineId} names one content`);
            names.set(l.lineId, { content: contentOf(l), n: (named?.n ?? 0) + 1 });
          }
          return names;
        };
        const [a, b] = [byName(one), byName(two)];
        const extraOf = (content: string) => extra.filter((l) => contentOf({ ...l, reference: l.reference || null, settles: l.settles.length === 0 ? null : l.settles }) === content).length;
        assert.equal([...a.values()].reduce((n, x) => n + x.n, 0), lines.length);
        for (const [name, { content, n }] of a) {
          assert.deepEqual(b.get(name), { content, n: n + extraOf(content) }, `day ${day}: ${name} names the same lines in the second export`);
        }
      }
    }));
  }
});
