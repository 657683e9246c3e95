"""A client's first hour, through a Python client generated from /v1/openapi.json.

Run by test/integration/generated-client.test.ts with the generated package installed; argv[1] is
the service's base URL. Every answer is read through the generated typed models: a response the
document does not describe comes back as None or as the wrong model, and the script fails.
"""
import sys
import uuid
from decimal import Decimal

from client import AuthenticatedClient, Client
from client.api.accounts import get_my_account, get_my_balance
from client.api.auth import create_session
from client.api.customers import create_customer
from client.api.fx import create_fx_quote, create_public_fx_quote, execute_fx_quote, get_fx_quote
from client.api.contacts import create_contact
from client.api.request_logs import list_request_logs
from client.api.sandbox import create_sandbox_account, sandbox_faucet
from client.api.transactions import get_transaction, list_transactions
from client.api.transfers import create_transfer, get_transfer
from client.api.wallets import create_wallet, create_wallet_transfer, get_wallet_balances
from client.api.holds import capture_hold, create_hold, get_hold, void_hold
from client.models import (
    CreateContactBody, CreateContactBodyBank, CreateContactBodyBankCountry, CreateContactBodyBankCurrency,
    CreateCustomerBody, CreateCustomerBodyCountryCode, CreateCustomerResponse200, CreateCustomerResponse201,
    CreateSandboxAccountBody, CreateSandboxAccountBodyCountryCode, CreateSandboxAccountResponse201,
    CreateSessionBody, CreateSessionResponse201, CreateTransferBody, CreateTransferResponse201,
    CreateTransferResponse202, Error, GetMyAccountResponse200,
    CreateFxQuoteBody, CreateFxQuoteResponse201, CreatePublicFxQuoteBody, CreatePublicFxQuoteResponse200,
    ExecuteFxQuoteBody, ExecuteFxQuoteResponse201, ExecuteFxQuoteResponse202, GetFxQuoteResponse200, GetMyBalanceResponse200,
    GetTransactionResponse200, GetTransferResponse200, ListRequestLogsResponse200,
    ListTransactionsResponse200, SandboxFaucetBody, SandboxFaucetResponse201, SandboxFaucetResponse202,
    SandboxFaucetBodyCurrency, CreateTransferBodyCurrency, CreateFxQuoteBodyFromCurrency, CreateFxQuoteBodyToCurrency,
    CreatePublicFxQuoteBodyFromCurrency, CreatePublicFxQuoteBodyToCurrency,
    CreateWalletBody, CreateWalletResponse201, CreateWalletTransferBody, CreateWalletTransferBodyCurrency,
    CreateWalletTransferResponse201, CreateWalletTransferResponse202, GetWalletBalancesResponse200,
    CreateHoldBody, CreateHoldBodyCurrency, CreateHoldResponse201, CreateHoldResponse202,
    CaptureHoldBody, CaptureHoldResponse200, CaptureHoldResponse202, GetHoldResponse200,
)

base_url = sys.argv[1]
PASSWORD = "correct horse battery staple"


def expect(value, model, what):
    if not isinstance(value, model):
        raise SystemExit(f"{what}: expected {model.__name__}, got {type(value).__name__}: {value!r}")
    return value


def sign_up(label):
    email = f"{label}-{uuid.uuid4()}@example.com"
    body = CreateSandboxAccountBody(email=email, password=PASSWORD, business_name=f"{label} Ltd",
                                    country_code=CreateSandboxAccountBodyCountryCode.GB)
    created = expect(create_sandbox_account.sync(client=Client(base_url=base_url), body=body),
                     CreateSandboxAccountResponse201, "POST /v1/sandbox/accounts")
    assert created.api_key.key.startswith("sk_sandbox_"), created.api_key.key
    assert created.session.token, "the sign-up returns a session token"
    return email, created


alice_email, alice = sign_up("alice")
bob_email, bob = sign_up("bob")
alice_client = AuthenticatedClient(base_url=base_url, token=alice.api_key.key)
session = expect(create_session.sync(client=Client(base_url=base_url), body=CreateSessionBody(email=alice_email, password=PASSWORD)),
                 CreateSessionResponse201, "POST /v1/auth/sessions")
dashboard = AuthenticatedClient(base_url=base_url, token=session.token)
me = expect(get_my_account.sync(client=dashboard),
            GetMyAccountResponse200, "GET /v1/accounts/me")
assert str(me.id) == str(alice.account.id), (me.id, alice.account.id)

# Funding: 201 when the ledger decided in time, 202 (repeat with the same key) when it did not.
faucet_key = str(uuid.uuid4())
for _ in range(20):
    funded = sandbox_faucet.sync(client=alice_client, body=SandboxFaucetBody(currency=SandboxFaucetBodyCurrency.USD, amount="100.00"), idempotency_key=faucet_key)
    if not isinstance(funded, SandboxFaucetResponse202):
        break
expect(funded, SandboxFaucetResponse201, "POST /v1/sandbox/faucet")

transfer_key = str(uuid.uuid4())
for _ in range(20):
    sent = create_transfer.sync(client=alice_client, idempotency_key=transfer_key,
                                body=CreateTransferBody(amount="12.34", currency=CreateTransferBodyCurrency.USD, recipient_email=bob_email))
    if not isinstance(sent, CreateTransferResponse202):
        break
sent = expect(sent, CreateTransferResponse201, "POST /v1/transfers")
fetched = expect(get_transfer.sync(client=alice_client, id=sent.transfer_id), GetTransferResponse200, "GET /v1/transfers/{id}")
assert fetched.status.value == "completed", fetched.status

balance = expect(get_my_balance.sync(client=dashboard), GetMyBalanceResponse200, "GET /v1/accounts/me/balance")
usd = [total for total in balance.totals if total.currency == "USD"]
assert usd and Decimal(usd[0].available) == Decimal("87.66"), balance.to_dict()

# FX: a public price, a locked quote, its execution once, and the refusal of a second.
price = expect(create_public_fx_quote.sync(client=Client(base_url=base_url), body=CreatePublicFxQuoteBody(
    from_currency=CreatePublicFxQuoteBodyFromCurrency.USD, to_currency=CreatePublicFxQuoteBodyToCurrency.EUR, from_amount="10.00")), CreatePublicFxQuoteResponse200, "POST /v1/fx/quotes")
assert Decimal(price.rate) < Decimal(price.mid_rate), price.to_dict()
quote = expect(create_fx_quote.sync(client=alice_client, idempotency_key=str(uuid.uuid4()), body=CreateFxQuoteBody(
    from_currency=CreateFxQuoteBodyFromCurrency.USD, to_currency=CreateFxQuoteBodyToCurrency.EUR, from_amount="10.00")), CreateFxQuoteResponse201, "POST /v1/fx/quote")
execute_key = str(uuid.uuid4())
for _ in range(20):
    executed = execute_fx_quote.sync(client=alice_client, idempotency_key=execute_key, body=ExecuteFxQuoteBody(quote_id=quote.id))
    if not isinstance(executed, ExecuteFxQuoteResponse202):
        break
executed = expect(executed, ExecuteFxQuoteResponse201, "POST /v1/fx/execute")
assert executed.quote.status.value == "consumed" and executed.quote.to_amount == quote.to_amount, executed.to_dict()
assert expect(get_fx_quote.sync(client=alice_client, id=quote.id), GetFxQuoteResponse200, "GET /v1/fx/quotes/{id}").status.value == "consumed"
again = expect(execute_fx_quote.sync(client=alice_client, idempotency_key=str(uuid.uuid4()), body=ExecuteFxQuoteBody(quote_id=quote.id)),
               Error, "POST /v1/fx/execute of a consumed quote")
assert again.error.value == "quote_already_consumed", again.to_dict()
credit = expect(get_transaction.sync(client=alice_client, id=executed.credit_transaction_id), GetTransactionResponse200, "GET /v1/transactions/{id}")
assert credit.currency == "EUR" and credit.amount == quote.to_amount, credit.to_dict()

transactions = expect(list_transactions.sync(client=alice_client), ListTransactionsResponse200, "GET /v1/transactions")
assert len(transactions.data) >= 2, transactions.to_dict()
one = expect(get_transaction.sync(client=alice_client, id=transactions.data[0].id), GetTransactionResponse200, "GET /v1/transactions/{id}")
assert one.id == transactions.data[0].id

customer_body = CreateCustomerBody(email=f"c-{uuid.uuid4()}@example.com", business_name="Customer Co",
                                   country_code=CreateCustomerBodyCountryCode.DE)
expect(create_customer.sync(client=alice_client, body=customer_body, idempotency_key=str(uuid.uuid4())),
       CreateCustomerResponse201, "POST /v1/customers (new)")
expect(create_customer.sync(client=alice_client, body=customer_body, idempotency_key=str(uuid.uuid4())),
       CreateCustomerResponse200, "POST /v1/customers (existing email)")

contact = create_contact.sync(client=alice_client, idempotency_key=str(uuid.uuid4()), body=CreateContactBody(
    name="Supplier", email=f"s-{uuid.uuid4()}@example.com",
    bank=CreateContactBodyBank(country=CreateContactBodyBankCountry.DE, bank_name="Bank", account_number="DE89370400440532013000",
                               currency=CreateContactBodyBankCurrency.EUR)))
assert contact is not None and not isinstance(contact, Error), contact

refused = expect(create_transfer.sync(client=alice_client, idempotency_key=str(uuid.uuid4()),
                                      body=CreateTransferBody(amount="1000000.00", currency=CreateTransferBodyCurrency.USD, recipient_email=bob_email)),
                 Error, "POST /v1/transfers beyond the balance")
assert refused.error.value == "insufficient_funds", refused.to_dict()

# Wallets and holds: a pocket, money moved into it, a hold captured in part and finally, and the
# refusal of a void after that.
wallet = expect(create_wallet.sync(client=alice_client, idempotency_key=str(uuid.uuid4()), body=CreateWalletBody(name="Savings")),
                CreateWalletResponse201, "POST /v1/wallets")
move_key = str(uuid.uuid4())
for _ in range(20):
    moved = create_wallet_transfer.sync(client=alice_client, idempotency_key=move_key, body=CreateWalletTransferBody(
        from_wallet_id="main", to_wallet_id=str(wallet.id), amount="5.00", currency=CreateWalletTransferBodyCurrency.USD))
    if not isinstance(moved, CreateWalletTransferResponse202):
        break
expect(moved, CreateWalletTransferResponse201, "POST /v1/wallet-transfers")
pocket = expect(get_wallet_balances.sync(client=alice_client, wallet_id=str(wallet.id)), GetWalletBalancesResponse200, "GET /v1/wallets/{wallet_id}/balances")
assert [(b.currency, b.available, b.held) for b in pocket.balances] == [("USD", "5.00", "0.00")], pocket.to_dict()
hold_key = str(uuid.uuid4())
for _ in range(20):
    held = create_hold.sync(client=alice_client, idempotency_key=hold_key, body=CreateHoldBody(amount="3.00", currency=CreateHoldBodyCurrency.USD))
    if not isinstance(held, CreateHoldResponse202):
        break
held = expect(held, CreateHoldResponse201, "POST /v1/holds")
capture_key = str(uuid.uuid4())
for _ in range(20):
    captured = capture_hold.sync(client=alice_client, hold_id=str(held.id), idempotency_key=capture_key,
                                 body=CaptureHoldBody(amount="1.00", recipient_email=bob_email, final=True))
    if not isinstance(captured, CaptureHoldResponse202):
        break
captured = expect(captured, CaptureHoldResponse200, "POST /v1/holds/{hold_id}/capture")
assert captured.status.value == "captured" and captured.released_amount == "2.00", captured.to_dict()
assert expect(get_hold.sync(client=alice_client, hold_id=str(held.id)), GetHoldResponse200, "GET /v1/holds/{hold_id}").captures[0].amount == "1.00"
not_active = expect(void_hold.sync(client=alice_client, hold_id=str(held.id), idempotency_key=str(uuid.uuid4())), Error, "POST /v1/holds/{hold_id}/void of a captured hold")
assert not_active.error.value == "hold_not_active", not_active.to_dict()

logs = expect(list_request_logs.sync(client=dashboard), ListRequestLogsResponse200, "GET /v1/request-logs")
assert isinstance(logs.data, list)
print("generated client: every call answered through its typed model")
