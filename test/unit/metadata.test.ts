// Metadata's one rule (ledger/metadata.ts, DESIGN.md section 5h): the bounds as a table in the
// order they are checked, a patch's effect, and a seeded generator of metadata objects near the
// bounds that the pure check and the API's validation of the published JSON Schema must judge
// alike, naming the same field (the ledger screens commands with the first, clients and the API's
// edge read the second); and the query's metadata[<key>]=<value> gathered into one object.
// TEST_SEED=n replays one seed.
import assert from 'node:assert/strict';
import { metadataPatchSchema, metadataProblem, metadataSchema, patchMetadata, type Metadata } from '../../ledger/metadata';
import { isDomainError } from '../../src/domain-error';
import { bodyValidator, gatherDeepObjects } from '../../src/http/validation';
import { prng } from '../support/prng';
import { replayOf, seeds } from '../support/seeds';

const keys = (n: number, prefix = 'k') => Object.fromEntries(Array.from({ length: n }, (_, i) => [`${prefix}${i}`, 'v']));
const validate = { create: bodyValidator({ type: 'object', properties: { metadata: metadataSchema } }), patch: bodyValidator({ type: 'object', properties: { metadata: metadataPatchSchema } }) };

/** The field the API's validation names for `value` as a body's metadata, or null when it takes it. */
function apiVerdict(value: unknown, patch: boolean): string | null {
  try {
    validate[patch ? 'patch' : 'create']({ metadata: value });
    return null;
  } catch (error) {
    if (!isDomainError(error) || error.code !== 'invalid_request') throw error;
    return error.details;
  }
}

describe('metadata: the bounds', () => {
  // [what, value, patch, the field named (null: taken)], in the order the checks run.
  const table: Array<[string, unknown, boolean, string | null]> = [
    ['none', {}, false, null],
    ['50 keys', keys(50), false, null],
    ['51 keys: the 51st is named', keys(51), false, 'metadata.k50'],
    ['not an object', 'order A-17', false, 'metadata'],
    ['an array', ['a'], false, 'metadata'],
    ['null', null, false, 'metadata'],
    ['a key of 40 characters', { ['k'.repeat(40)]: 'v' }, false, null],
    ['a key of 41 characters', { ok: 'v', ['k'.repeat(41)]: 'v' }, false, `metadata.${'k'.repeat(41)}`],
    ['an empty key', { '': 'v' }, false, 'metadata.'],
    ['40 characters counted as characters, not UTF-16 units', { ['💸'.repeat(40)]: 'v' }, false, null],
    ['a value of 500 characters', { note: 'x'.repeat(500) }, false, null],
    ['a value of 501 characters', { note: 'x'.repeat(501) }, false, 'metadata.note'],
    ['an empty value', { note: '' }, false, null],
    ['a number', { order: 17 }, false, 'metadata.order'],
    ['an object', { order: { id: 'A' } }, false, 'metadata.order'],
    ['null on create', { order: null }, false, 'metadata.order'],
    ['null in a patch removes', { order: null }, true, null],
    ['a number in a patch', { order: 17 }, true, 'metadata.order'],
    ['a long key comes before a bad value', { bad: 1, ['k'.repeat(41)]: 'v' }, false, `metadata.${'k'.repeat(41)}`],
    ['the count comes before a long key', { ...keys(50), ['k'.repeat(41)]: 'v' }, false, `metadata.${'k'.repeat(41)}`],
    ['"__proto__" is a key like any other', JSON.parse('{"__proto__": "x"}'), false, null],
  ];
  for (const [what, value, patch, field] of table) {
    it(`${what}: ${field === null ? 'taken' : `refused naming ${field}`}, by the rule and by the API's validation alike`, () => {
      assert.equal(metadataProblem(value, patch)?.field ?? null, field);
      assert.equal(apiVerdict(value, patch), field);
    });
  }
});

describe('metadata: a patch', () => {
  const current: Metadata = { a: '1', b: '2' };
  it('sets a string, removes a null, keeps what it does not name, and leaves the current object as it was', () => {
    assert.deepEqual(patchMetadata(current, { b: null, c: '3', a: '9' }), { metadata: { a: '9', c: '3' } });
    assert.deepEqual(patchMetadata(current, { gone: null }), { metadata: current }, 'removing a key that is not there changes nothing');
    assert.deepEqual(current, { a: '1', b: '2' });
  });

  it('refuses a result past 50 keys, naming the first key it adds past the bound; removals in the same patch make room', () => {
    const full = keys(49);
    assert.deepEqual(patchMetadata(full, { x: '1' }), { metadata: { ...full, x: '1' } });
    const refused = patchMetadata(full, { k0: 'changed', x: '1', y: '2', z: '3' });
    assert.ok('problem' in refused && refused.problem.field === 'metadata.y', JSON.stringify(refused));
    assert.ok('metadata' in patchMetadata(full, { k0: null, x: '1', y: '2' }), 'one removed, two added: 50');
  });

  it('keeps "__proto__" as a key, set and removed like any other', () => {
    const patch = JSON.parse('{"__proto__": "x"}');
    const set = patchMetadata({}, patch);
    assert.ok('metadata' in set && Object.hasOwn(set.metadata, '__proto__') && Object.keys(set.metadata).length === 1);
    assert.deepEqual(patchMetadata(set.metadata, JSON.parse('{"__proto__": null}')), { metadata: {} });
  });
});

/** A metadata object near the bounds, drawn from `random`: mostly valid, now and then one thing past a bound or of another type. */
function drawMetadata(random: () => number): Record<string, unknown> {
  const count = random() < 0.1 ? 49 + Math.floor(random() * 4) : Math.floor(random() * 6);
  const value: Record<string, unknown> = {};
  for (let i = 0; i < count; i++) {
    const length = random() < 0.1 ? [0, 39, 40, 41][Math.floor(random() * 4)] : 1 + Math.floor(random() * 12);
    const key = `${i}_${'k'.repeat(40)}`.slice(0, length);
    const draw = random();
    value[key] = draw < 0.05 ? 42 : draw < 0.1 ? null : draw < 0.13 ? ['a'] : 'v'.repeat(random() < 0.1 ? 499 + Math.floor(random() * 3) : Math.floor(random() * 8));
  }
  return value;
}

describe('metadata: generated objects (seeded)', () => {
  for (const seed of seeds([5, 6])) {
    it(`judges 2,000 drawn objects as the API's validation does, naming the same field (${replayOf(seed)})`, () => {
      const random = prng(seed);
      for (let n = 0; n < 2_000; n++) {
        const patch = random() < 0.5;
        const value = drawMetadata(random);
        const what = `${replayOf(seed)}, object ${n} (${patch ? 'patch' : 'create'}): ${JSON.stringify(value).slice(0, 200)}`;
        assert.equal(metadataProblem(value, patch)?.field ?? null, apiVerdict(value, patch), what);
      }
    });
  }
});

describe('metadata in a query: metadata[<key>]=<value> (OpenAPI deepObject)', () => {
  const schema = { type: 'object', properties: { metadata: { type: 'object' }, limit: { type: 'integer' }, other: { type: 'string' } } };
  // [what, the query as parsed, as the schema reads it]
  const table: Array<[string, Record<string, unknown>, Record<string, unknown>]> = [
    ['pairs gathered under their name, the other parameters kept', { 'metadata[order_id]': 'A-17', 'metadata[the key]': '', limit: '5' }, { metadata: { order_id: 'A-17', 'the key': '' }, limit: '5' }],
    ['a key holding brackets: all between the first [ and the last ]', { 'metadata[a[b]]': 'x' }, { metadata: { 'a[b]': 'x' } }],
    ['an empty key', { 'metadata[]': 'x' }, { metadata: { '': 'x' } }],
    ['a key sent twice keeps both values, for the schema to refuse', { 'metadata[a]': ['1', '2'] }, { metadata: { a: ['1', '2'] } }],
    ['metadata given as one value leaves the pairs as they are', { metadata: 'x', 'metadata[a]': '1' }, { metadata: 'x', 'metadata[a]': '1' }],
    ['brackets on a parameter that is no object: left as sent', { 'other[a]': '1', 'unknown[b]': '2' }, { 'other[a]': '1', 'unknown[b]': '2' }],
    ['"__proto__" is a key like any other', { 'metadata[__proto__]': 'x' }, { metadata: JSON.parse('{"__proto__":"x"}') }],
  ];
  for (const [what, query, expected] of table) {
    it(what, () => {
      const gathered = gatherDeepObjects(query, schema);
      assert.deepEqual(JSON.parse(JSON.stringify(gathered)), JSON.parse(JSON.stringify(expected)));
    });
  }
});
