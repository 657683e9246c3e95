// The command line: `--seed N --ops N --clients C --faults off|processes|on`, `--minutes M` (a
// guard: the run stops there whatever its count of operations; without --ops, the bound), `--short`
// (CI: seed 7 unless given, 6,000 operations, six clients, every fault) and `--replay TRACE` (sends
// a run's traced requests again: replay.ts).
import { NOMINAL_OPS_PER_S, type FaultsMode } from './plan';

export interface Settings {
  seed: number;
  /** Operations of all clients together, after the set-up; null when only --minutes bounds the run. */
  ops: number | null;
  minutes: number;
  clients: number;
  faults: FaultsMode;
  short: boolean;
  replay: string | null;
}

export function parseArgs(argv: string[]): Settings {
  const value = (name: string): string | undefined => {
    const at = argv.indexOf(`--${name}`);
    return at >= 0 ? argv[at + 1] : undefined;
  };
  const short = argv.includes('--short');
  const seed = value('seed') !== undefined ? Number.parseInt(value('seed')!, 10) : short ? 7 : Math.floor(Math.random() * 2 ** 31);
  const opsGiven = value('ops') ?? (short ? '6000' : value('minutes') === undefined ? '30000' : undefined);
  const ops = opsGiven === undefined ? null : Number.parseInt(opsGiven, 10);
  // A guard three times what the operations take at the nominal pace (at least five minutes).
  const minutes = Number.parseFloat(value('minutes') ?? String(Math.max(5, Math.ceil((3 * (ops ?? 0)) / NOMINAL_OPS_PER_S / 60))));
  const clients = Number.parseInt(value('clients') ?? (short ? '6' : '8'), 10);
  const faults = (value('faults') ?? 'on') as FaultsMode;
  const replay = value('replay') ?? null;
  if (!Number.isInteger(seed) || seed < 0) throw new Error(`--seed must be a non-negative integer, not ${value('seed')}`);
  if (ops !== null && !(Number.isInteger(ops) && ops > 0)) throw new Error(`--ops must be a positive integer, not ${opsGiven}`);
  if (!(minutes > 0)) throw new Error(`--minutes must be above zero, not ${value('minutes')}`);
  if (!Number.isInteger(clients) || clients < 2) throw new Error(`--clients must be an integer of at least 2, not ${value('clients')}`);
  if (!['off', 'processes', 'on'].includes(faults)) throw new Error(`--faults must be off, processes or on, not ${faults}`);
  return { seed, ops, minutes, clients, faults, short, replay };
}

/** The share of the run's operations that client `index` sends (the first ones send one more when they do not divide). */
export const opsOfClient = (ops: number, clients: number, index: number): number => Math.floor(ops / clients) + (index < ops % clients ? 1 : 0);
