// The ledger's store (ledger/ports.ts) on Postgres: a round is one transaction of a few round
// trips (round-transaction.ts), and ledger accounts are made ahead of it, outside its locks.
import type { Knex } from 'knex';
import type { LedgerStore } from '../ports';
import { ensureLedgerAccounts } from './reads';
import { LedgerRound } from './round-transaction';

export function postgresLedgerStore(db: Knex): LedgerStore {
  return {
    ensureAccounts: (refs) => ensureLedgerAccounts(db, refs),
    inRound: (work, statementTimeoutMs) => LedgerRound.run(db, work, statementTimeoutMs),
  };
}
