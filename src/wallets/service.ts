// Wallets' life outside the ledger: created, renamed, closed. Closing is the one step that must
// agree with the ledger: a wallet closes only when empty, and no round may move money into it
// after it was found empty. The wallet's row is locked first and its ledger accounts after, in
// code order, as a ledger round locks them (ledger/store/round-transaction.ts), and a round reads the
// wallet under its lock before it decides: one of the two waits for the other.
import { patchMetadata, type Metadata, type MetadataPatch } from '../../ledger/metadata';
import type { Db } from '../db';
import { insertOnce } from '../db/insert-once';
import { DomainError } from '../domain-error';
import type { WalletRow } from './reads';

export class Wallets {
  constructor(private readonly db: Db) {}

  /** A wallet under `id` (derived from its Idempotency-Key's execution): made, or found made. */
  async create(id: string, accountId: string, name: string, metadata: Metadata): Promise<{ row: WalletRow; created: boolean }> {
    return insertOnce<WalletRow>(this.db, 'wallets', { id, account_id: accountId, name, metadata: JSON.stringify(metadata) });
  }

  /**
   * Renames the wallet and changes its metadata key by key (DESIGN.md section 5h: null removes a
   * key), on the row locked, so two changes at once each keep the other's keys.
   * @throws DomainError wallet_closed (a closed wallet no longer changes), invalid_request naming the first metadata key past 50
   */
  async update(id: string, changes: { name?: string; metadata?: MetadataPatch }): Promise<WalletRow> {
    return this.db.transaction(async (trx) => {
      const wallet: WalletRow = await trx('wallets').where('id', id).forUpdate().first();
      if (wallet.closed_at) throw new DomainError('wallet_closed', 'the wallet is closed: it can no longer change', 'wallet_id');
      const values: Record<string, unknown> = { updated_at: trx.fn.now() };
      if (changes.name !== undefined) values.name = changes.name;
      if (changes.metadata !== undefined) {
        const result = patchMetadata(wallet.metadata, changes.metadata);
        if ('problem' in result) throw new DomainError('invalid_request', result.problem.message, result.problem.field);
        values.metadata = JSON.stringify(result.metadata);
      }
      const [row] = await trx('wallets').where('id', id).update(values).returning('*');
      return row;
    });
  }

  /**
   * Closes the wallet if every balance of it is zero; closing a closed wallet answers it as it is.
   * @throws DomainError wallet_not_empty when money is left in it (available or held)
   */
  async close(id: string): Promise<WalletRow> {
    return this.db.transaction(async (trx) => {
      const wallet: WalletRow = await trx('wallets').where('id', id).forUpdate().first();
      if (wallet.closed_at) return wallet;
      const accounts: Array<{ code: string; currency: string; balance: string }> = await trx('ledger_accounts').where('wallet_id', id)
        .orderBy('code').forUpdate().select('code', 'currency', 'balance');
      const left = accounts.find((a) => !isZero(a.balance));
      if (left) throw new DomainError('wallet_not_empty', `the wallet still holds ${left.currency}: move it out (POST /v1/wallet-transfers) or release its holds first`, 'wallet_id');
      const [row] = await trx('wallets').where('id', id).update({ closed_at: trx.fn.now(), updated_at: trx.fn.now() }).returning('*');
      return row;
    });
  }
}

/** A NUMERIC balance as Postgres prints it ("0.000000") is zero. */
const isZero = (text: string): boolean => /^-?0*(\.0*)?$/.test(text);
