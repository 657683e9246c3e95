// Wallets as the ledger knows them (DESIGN.md section 5g): whose they are, and whether they are
// still open. The API creates, renames and closes them; the ledger only reads them, locked for
// the round that moves money into or out of them (store/round-transaction.ts), so a wallet closed
// while a round decides never receives money after it was found empty.
export interface WalletRecord {
  id: string;
  account_id: string;
  closed_at: Date | null;
}
