// Runs a walk-through of the README as written: the first session's steps (without its event
// stream) and then the shell block under a heading, against a test service, with the files the
// README writes under /tmp given paths of their own. Answers the script's JSON lines after the
// first session's own.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const README = path.join(__dirname, '..', '..', '..', 'README.md');
/** JSON lines the first session's steps print before the walk-through's own. */
const FIRST_SESSION_LINES = 5;

/** The first sh block under `heading`. */
export function readmeBlock(text: string, heading: string): string {
  const match = /```sh\n([\s\S]*?)```/.exec(text.slice(text.indexOf(heading)));
  assert.ok(match, `the README has a sh block under ${heading}`);
  return match[1];
}

/** Runs the block under `heading` after the first session; `files` are the /tmp/<name>.json it writes. */
export async function runReadmeWalkthrough(baseUrl: string, heading: string, files: string[]): Promise<unknown[]> {
  const text = fs.readFileSync(README, 'utf8');
  const moved = files.map((name) => [`/tmp/${name}.json`, path.join(os.tmpdir(), `readme-${name}-${randomUUID()}.json`)]);
  let script = `${readmeBlock(text, '## A first session')}\n${readmeBlock(text, heading)}`
    .replace(/^B=.*$/m, `B=${baseUrl}`)
    .replace(/^curl -sN .*&$/m, '')
    .replace(/^kill %1.*$/m, '');
  for (const [from, to] of moved) script = script.replaceAll(from, to);
  const shell = spawn('bash', ['-e', '-c', script], { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  let errors = '';
  shell.stdout!.on('data', (chunk: Buffer) => { output += chunk.toString(); });
  shell.stderr!.on('data', (chunk: Buffer) => { errors += chunk.toString(); });
  const code = await new Promise<number | null>((resolve) => shell.once('exit', resolve));
  for (const [, file] of moved) fs.rmSync(file, { force: true });
  assert.equal(code, 0, `the script ran to its end\noutput:\n${output}\nerrors:\n${errors}`);
  assert.equal(errors, '', 'no step printed an error');
  return output.split('\n').filter((line) => line.startsWith('{')).map((line) => JSON.parse(line)).slice(FIRST_SESSION_LINES);
}
