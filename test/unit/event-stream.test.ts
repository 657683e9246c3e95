// The clients' one event-stream parser: the rules of the WHATWG event-stream format as a table,
// then a seeded random walk that writes event sequences in every legal spelling, cuts their bytes
// anywhere, and expects exactly the blocks written back.
import assert from 'node:assert/strict';
import { EventStreamParser, readEventStream, type SseBlock } from '../../src/event-stream';
import { prng } from '../support/prng';

const block = (fields: Partial<SseBlock>): SseBlock => ({ id: null, event: null, data: null, retryMs: null, comments: [], ...fields });

describe('EventStreamParser: the rules of the event-stream format', () => {
  const rules: Array<[string, string, SseBlock[]]> = [
    ['one space after the colon is dropped, a second one kept', 'data:  two\nevent: one\n\n', [block({ event: 'one', data: ' two' })]],
    ['no space after the colon is fine too', 'id:7\ndata:x\n\n', [block({ id: '7', data: 'x' })]],
    ['data lines join with LF', 'data: a\ndata:\ndata: c\n\n', [block({ data: 'a\n\nc' })]],
    ['a field name alone has an empty value', 'data\ndata\n\n', [block({ data: '\n' })]],
    ['CRLF, CR and LF all end lines', 'data: a\r\ndata: b\rdata: c\n\r\n', [block({ data: 'a\nb\nc' })]],
    ['a comment is kept as text, and a block without data is a heartbeat', ': heartbeat\n\n', [block({ comments: ['heartbeat'] })]],
    ['retry takes digits only', 'retry: 2000\n\nretry: 2s\n\n', [block({ retryMs: 2000 }), block({})]],
    ['an id holding NUL is ignored', 'id: a\0b\ndata: x\n\n', [block({ data: 'x' })]],
    ['unknown fields are ignored', 'colour: red\ndata: x\n\n', [block({ data: 'x' })]],
    ['blank lines between blocks make no blocks', '\n\n\ndata: x\n\n\n\n', [block({ data: 'x' })]],
    ['a leading byte order mark is dropped', '\uFEFFdata: x\n\n', [block({ data: 'x' })]],
    ['a block without its blank line waits', 'data: x\n', []],
  ];
  for (const [rule, text, expected] of rules) {
    it(rule, () => assert.deepEqual(new EventStreamParser().push(text), expected));
  }

  it('keeps the last id across blocks that have none (the Last-Event-ID to resume with)', () => {
    const parser = new EventStreamParser();
    parser.push('id: 1\ndata: a\n\ndata: b\n\n: heartbeat\n\n');
    assert.equal(parser.lastEventId, '1');
  });

  it('takes a CR at the end of a piece and an LF at the start of the next as one line end', () => {
    const parser = new EventStreamParser();
    assert.deepEqual(parser.push('data: x\r'), []);
    assert.deepEqual(parser.push('\n'), []);
    assert.deepEqual(parser.push('\r\n'), [block({ data: 'x' })]);
  });

  it('at the end of the stream, a held CR ends its line and an unfinished block is dropped', () => {
    const parser = new EventStreamParser();
    assert.deepEqual(parser.push('data: x\r\r'), []);
    assert.deepEqual(parser.end(), [block({ data: 'x' })]);
    parser.push('data: y\n');
    assert.deepEqual(parser.end(), []);
  });
});

const WALKS = 300;
const BLOCKS_MAX = 12;
const LINE_ENDS = ['\n', '\r', '\r\n'];
/** Characters values are made of: spaces and colons where they could confuse, and multi-byte UTF-8. */
const ALPHABET = ['a', 'Z', '7', ' ', ':', '-', '{', '"', 'é', '€', '日', '🙂'];

type Random = () => number;
const below = (random: Random, n: number): number => Math.floor(random() * n);
const pick = <T>(random: Random, items: readonly T[]): T => items[below(random, items.length)];
const text = (random: Random, lengthMax: number): string => Array.from({ length: below(random, lengthMax + 1) }, () => pick(random, ALPHABET)).join('');

/** A block as the parser should give it back. */
function randomBlock(random: Random): SseBlock {
  const dataLines = Array.from({ length: below(random, 4) }, () => text(random, 12));
  const comments = Array.from({ length: below(random, 3) }, () => text(random, 8));
  const written = block({
    id: random() < 0.6 ? text(random, 10) : null,
    event: random() < 0.5 ? text(random, 10) : null,
    data: dataLines.length > 0 ? dataLines.join('\n') : null,
    retryMs: random() < 0.1 ? below(random, 10_000) : null,
    comments,
  });
  // A block of no lines at all is no block: give it a comment.
  const empty = written.id === null && written.event === null && written.data === null && written.retryMs === null && comments.length === 0;
  return empty ? { ...written, comments: [''] } : written;
}

/** `name` and `value` in one of their legal spellings. */
function fieldLine(random: Random, name: string, value: string): string {
  if (value === '' && name !== '' && random() < 0.3) return name; // a bare empty comment would be a blank line
  // Without the space, a value that starts with one would lose it.
  return random() < 0.5 || value.startsWith(' ') ? `${name}: ${value}` : `${name}:${value}`;
}

/** `lines` with `ordered` placed at random among them, keeping their own order. */
function interleave(random: Random, lines: string[], ordered: string[]): string[] {
  const merged = [...lines];
  let at = 0;
  for (const line of ordered) {
    at += below(random, merged.length - at + 1);
    merged.splice(at++, 0, line);
  }
  return merged;
}

/** The block as a server may write it: its fields in random order (comments and data lines in theirs), each line with a random end. */
function write(random: Random, sent: SseBlock): string {
  const fields: string[] = [];
  if (sent.id !== null) fields.push(fieldLine(random, 'id', sent.id));
  if (sent.event !== null) fields.push(fieldLine(random, 'event', sent.event));
  if (sent.retryMs !== null) fields.push(fieldLine(random, 'retry', String(sent.retryMs)));
  if (random() < 0.2) fields.push(fieldLine(random, 'unknown', text(random, 5)));
  for (let i = fields.length - 1; i > 0; i--) {
    const j = below(random, i + 1);
    [fields[i], fields[j]] = [fields[j], fields[i]];
  }
  const comments = sent.comments.map((comment) => fieldLine(random, '', comment));
  const dataLines = (sent.data?.split('\n') ?? []).map((line) => fieldLine(random, 'data', line));
  const lines = interleave(random, interleave(random, fields, comments), dataLines);
  const blankLines = random() < 0.2 ? ['', ''] : [''];
  let out = '';
  for (const line of [...lines, ...blankLines]) {
    // After a CR, an empty line ending in LF would read as the CR's CRLF: no blank line at all.
    const end = line === '' && out.endsWith('\r') ? pick(random, ['\r', '\r\n']) : pick(random, LINE_ENDS);
    out += line + end;
  }
  return out;
}

/** `bytes` cut at random places, multi-byte characters included. */
function cut(random: Random, bytes: Uint8Array): Uint8Array[] {
  const pieces: Uint8Array[] = [];
  for (let at = 0; at < bytes.length;) {
    const length = 1 + below(random, 16);
    pieces.push(bytes.subarray(at, at + length));
    at += length;
  }
  return pieces;
}

/** A fetch body handing out `pieces` one read at a time. */
const bodyOf = (pieces: Uint8Array[]) => ({
  getReader: () => ({ read: async () => (pieces.length > 0 ? { done: false, value: pieces.shift() } : { done: true }) }),
});

describe('EventStreamParser: a seeded random walk of written streams', () => {
  for (let seed = 1; seed <= WALKS; seed++) {
    it(`seed ${seed}: gives back exactly the blocks written, however the bytes are cut`, async () => {
      const random = prng(seed);
      const written = Array.from({ length: 1 + below(random, BLOCKS_MAX) }, () => randomBlock(random));
      const stream = (random() < 0.1 ? '\uFEFF' : '') + written.map((each) => write(random, each)).join('');
      const read: SseBlock[] = [];
      await readEventStream(bodyOf(cut(random, new TextEncoder().encode(stream))), (each) => { read.push(each); });
      assert.deepEqual(read, written);
    });
  }
});
