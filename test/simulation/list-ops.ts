// Lists a client's planned operations for a seed (`node dist/test/simulation/list-ops.js --seed 7
// --clients 6 --client 3 --count 40`): what a failing seed's client sent, without running it, as
// the start of a regression test of its own.
import { clientOps } from './plan';

const value = (name: string, fallback: string): number => {
  const at = process.argv.indexOf(`--${name}`);
  return Number.parseInt(at >= 0 ? process.argv[at + 1] : fallback, 10);
};
const ops = clientOps(value('seed', '7'), value('client', '0'), value('clients', '8'));
for (let i = 0; i < value('count', '30'); i++) console.log(JSON.stringify(ops.next().value));
