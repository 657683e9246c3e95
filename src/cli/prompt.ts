// Asking the user at the terminal, the answer hidden for a password.
import readline from 'node:readline';
import { Writable } from 'node:stream';

export async function ask(question: string, hidden = false): Promise<string> {
  let muted = false;
  const output = new Writable({
    write(chunk, encoding, done) {
      if (!muted) process.stderr.write(chunk, encoding);
      done();
    },
  });
  const rl = readline.createInterface({ input: process.stdin, output, terminal: process.stdin.isTTY === true });
  try {
    const answer = new Promise<string>((resolve) => rl.question(question, resolve));
    muted = hidden;
    const text = await answer;
    if (hidden) process.stderr.write('\n');
    return text.trim();
  } finally {
    rl.close();
  }
}
