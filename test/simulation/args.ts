// The command line: `--seed N --minutes M --clients C --faults off|processes|on`, and `--short`
// (CI: seed 7 unless given, two minutes, six clients, every fault).
import type { FaultsMode } from './plan';

export interface Settings { seed: number; minutes: number; clients: number; faults: FaultsMode; short: boolean }

export function parseArgs(argv: string[]): Settings {
  const value = (name: string): string | undefined => {
    const at = argv.indexOf(`--${name}`);
    return at >= 0 ? argv[at + 1] : undefined;
  };
  const short = argv.includes('--short');
  const seed = value('seed') !== undefined ? Number.parseInt(value('seed')!, 10) : short ? 7 : Math.floor(Math.random() * 2 ** 31);
  const minutes = Number.parseFloat(value('minutes') ?? (short ? '2' : '10'));
  const clients = Number.parseInt(value('clients') ?? (short ? '6' : '8'), 10);
  const faults = (value('faults') ?? (short ? 'on' : 'processes')) as FaultsMode;
  if (!Number.isInteger(seed) || seed < 0) throw new Error(`--seed must be a non-negative integer, not ${value('seed')}`);
  if (!(minutes > 0)) throw new Error(`--minutes must be above zero, not ${value('minutes')}`);
  if (!Number.isInteger(clients) || clients < 2) throw new Error(`--clients must be an integer of at least 2, not ${value('clients')}`);
  if (!['off', 'processes', 'on'].includes(faults)) throw new Error(`--faults must be off, processes or on, not ${faults}`);
  return { seed, minutes, clients, faults, short };
}
