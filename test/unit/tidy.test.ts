// House rules checked by a test rather than by memory (STYLE.md): money never passes through a
// JS number, and the ledger domain stays free of HTTP and Kafka.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';

const ROOT = path.join(__dirname, '..', '..', '..');

function sources(folder: string): Array<{ file: string; text: string }> {
  const found: Array<{ file: string; text: string }> = [];
  for (const entry of fs.readdirSync(path.join(ROOT, folder), { withFileTypes: true })) {
    const relative = path.join(folder, entry.name);
    if (entry.isDirectory()) found.push(...sources(relative));
    else if (entry.name.endsWith('.ts')) found.push({ file: relative, text: fs.readFileSync(path.join(ROOT, relative), 'utf8') });
  }
  return found;
}

describe('house rules', () => {
  const code = ['src', 'ledger', 'consumers'].flatMap(sources);

  it('never turns an amount into a JS number', () => {
    const offenders = code.flatMap(({ file, text }) => text.split('\n').flatMap((line, i) =>
      /parseFloat|(?<![\w.])Number\([^)]*(amount|balance|total)|\b(amount|balance)\w*\.toNumber\(\)/i.test(line) ? [`${file}:${i + 1}: ${line.trim()}`] : []));
    assert.deepEqual(offenders, []);
  });

  it('keeps ledger/ free of HTTP and Kafka', () => {
    const offenders = code.filter(({ file, text }) => file.startsWith('ledger') && /from '(koa|@koa\/router|kafkajs|ioredis)'/.test(text)).map((s) => s.file);
    assert.deepEqual(offenders, []);
  });

  it('keeps source files to a reviewable size', () => {
    const long = code.filter(({ text }) => text.split('\n').length > 400).map((s) => `${s.file}: ${s.text.split('\n').length} lines`);
    assert.deepEqual(long, []);
  });
});
