// Accounts, keys and virtual IBANs as stored (rows) and as the API shows them (views). Apart
// from the service, so authentication and its key cache read them without importing the service.
import type { KeyType } from './credentials';

export const KYB_STATUSES = ['pending', 'in_review', 'active', 'rejected', 'suspended'] as const;
export type KybStatus = (typeof KYB_STATUSES)[number];

export interface AccountRow {
  id: string;
  email: string;
  business_name: string;
  country_code: string;
  kyb_status: KybStatus;
  environment: string;
  created_at: Date;
}

export interface ApiKeyRow {
  id: string;
  account_id: string;
  type: KeyType;
  environment: string;
  name: string | null;
  key_hint: string;
  scopes: string[];
  created_at: Date;
  revoked_at: Date | null;
}

const ACCOUNT_COLUMNS = ['id', 'email', 'business_name', 'country_code', 'kyb_status', 'environment', 'created_at'] as const;

export function accountView(account: AccountRow, wallet: { network: string; address: string } | null) {
  return {
    id: account.id,
    email: account.email,
    business_name: account.business_name,
    country_code: account.country_code,
    kyb_status: account.kyb_status,
    environment: account.environment,
    chain_wallet: wallet ? { network: wallet.network, address: wallet.address } : null,
    created_at: account.created_at.toISOString(),
  };
}

export type AccountView = ReturnType<typeof accountView>;

/** An account row joined with its chain wallet, if any: the columns ACCOUNT_WITH_WALLET selects. */
export type AccountWithWallet = AccountRow & { wallet_network: string | null; wallet_address: string | null };
export const ACCOUNT_WITH_WALLET = ACCOUNT_COLUMNS.map((c) => `accounts.${c}`).concat('chain_wallets.network as wallet_network', 'chain_wallets.address as wallet_address');

export function accountWithWalletView(row: AccountWithWallet): AccountView {
  return accountView(row, row.wallet_address !== null ? { network: row.wallet_network!, address: row.wallet_address } : null);
}

export function apiKeyView(row: ApiKeyRow) {
  return {
    id: row.id,
    type: row.type,
    name: row.name,
    key_hint: row.key_hint,
    scopes: row.scopes,
    environment: row.environment,
    created_at: row.created_at.toISOString(),
    revoked_at: row.revoked_at ? row.revoked_at.toISOString() : null,
  };
}

export function vibanView(row: { id: string; currency: string; bank_name: string; bank_country: string; account_number: string; routing_number: string }) {
  return {
    id: row.id, currency: row.currency, bank_name: row.bank_name, bank_country: row.bank_country,
    account_number: row.account_number, routing_number: row.routing_number,
  };
}
