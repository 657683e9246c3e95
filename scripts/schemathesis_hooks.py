# The fuzzer's hooks (scripts/schemathesis.sh): what a real client knows and the document cannot
# say, given to the fuzzer in every phase. Only well-formed values are replaced; a malformed one
# is the fuzzer's negative case and is sent as it is, to be refused.
#
# - Idempotency-Key: a client sends each new request under a key of its own; the fuzzer draws few
#   distinct keys, so most of its requests would reuse one with another body and be refused as
#   idempotency conflicts before their data is looked at.
# - Every credential acts for the fuzz account; the master key names it with account_id (a rule on
#   the credential, not on the body, so the document leaves the field optional).
# - Payments draw on the customer the script linked with every partner, from its default funding
#   method.
# - A transfer goes to a registered recipient: friend@example.com, or its bank account in the
#   transfer's currency (the sandbox pays no other, SPEC.md section 1).
# - An FX execution executes a quote made just now.
# - A reconciliation covers from..to, at most 31 days and never backwards (a rule across two
#   fields); an uploaded statement is a CSV whose reference is the fuzzer's string.
import datetime
import json
import os
import re
import urllib.request
import uuid

import schemathesis

WELL_FORMED_KEY = re.compile(r"^[!-~]{1,255}$")
UUID = re.compile(r"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$")
DAY = re.compile(r"^(\d{4}-\d{2}-\d{2})")
ENV = os.environ
RECIPIENT_BANKS = json.loads(ENV.get("FUZZ_RECIPIENT_BANKS") or "{}")
RANGE_DAYS_MAX = 31


def well_formed_uuid(value):
    return isinstance(value, str) and UUID.match(value) is not None


def body_properties(case):
    try:
        content = case.operation.definition.raw["requestBody"]["content"]["application/json"]
        return content["schema"].get("properties", {})
    except (KeyError, TypeError, AttributeError):
        return {}


def day_of(value):
    match = DAY.match(value) if isinstance(value, str) else None
    if not match:
        return None
    try:
        return datetime.date.fromisoformat(match.group(1))
    except ValueError:
        return None


def csv_field(text):
    return '"' + text.replace('"', '""') + '"'


def name_the_account(case, body):
    if "account_id" not in body_properties(case):
        return
    master = ENV.get("FUZZ_TOKEN") == ENV.get("FUZZ_MASTER_KEY")
    if well_formed_uuid(body.get("account_id")) or (master and "account_id" not in body):
        body["account_id"] = ENV["FUZZ_ACCOUNT_ID"]


def linked_customer(body):
    if well_formed_uuid(body.get("customer_id")):
        body["customer_id"] = ENV["FUZZ_CUSTOMER_ID"]
    # The customer's funding methods have ids the fuzzer cannot know; without one, its default pays.
    if isinstance(body.get("source_funding_method_external_id"), str):
        del body["source_funding_method_external_id"]


def registered_recipient(body):
    if isinstance(body.get("recipient_email"), str) and "@" in body["recipient_email"]:
        body["recipient_email"] = "friend@example.com"
    recipient = body.get("recipient")
    bank = recipient.get("bank") if isinstance(recipient, dict) else None
    currency = bank.get("currency") if isinstance(bank, dict) else None
    if isinstance(currency, str) and currency in RECIPIENT_BANKS and isinstance(bank.get("account_number"), str):
        bank["account_number"] = RECIPIENT_BANKS[bank["currency"]]


def fresh_quote(body):
    """The id of a quote made just now: the fuzzer's own quotes expire (it calls the sandbox's
    expire route too) or are executed before it sends them again."""
    if not well_formed_uuid(body.get("quote_id")):
        return
    quote = {"from_currency": "USD", "to_currency": "EUR", "from_amount": "1.00", "account_id": ENV["FUZZ_ACCOUNT_ID"]}
    request = urllib.request.Request(
        f"{ENV['FUZZ_BASE_URL']}/v1/fx/quote", data=json.dumps(quote).encode(), method="POST",
        headers={"Authorization": f"Bearer {ENV['FUZZ_TOKEN']}", "Content-Type": "application/json", "Idempotency-Key": str(uuid.uuid4())},
    )
    with urllib.request.urlopen(request, timeout=10) as response:
        body["quote_id"] = json.load(response)["id"]


def reconciliation_range(body):
    first, last = day_of(body.get("from")), day_of(body.get("to"))
    if first is not None and last is not None and not (0 <= (last - first).days < RANGE_DAYS_MAX):
        body["to"] = body["from"]
    if isinstance(body.get("statement_csv"), str) and first is not None:
        reference = body["statement_csv"] or "ref"
        body["statement_csv"] = f"id,reference,amount,currency,value_date\nfuzz_line,{csv_field(reference)},1.00,USD,{first.isoformat()}\n"


@schemathesis.hook
def before_call(context, case, **kwargs):
    headers = case.headers or {}
    key = headers.get("Idempotency-Key")
    if isinstance(key, str) and WELL_FORMED_KEY.match(key):
        headers["Idempotency-Key"] = str(uuid.uuid4())
        case.headers = headers
    body = case.body
    if not isinstance(body, dict):
        return
    name_the_account(case, body)
    path = case.operation.path
    if path in ("/v1/payments/add-funds", "/v1/payments/send"):
        linked_customer(body)
    if path == "/v1/transfers":
        registered_recipient(body)
    if path == "/v1/fx/execute":
        fresh_quote(body)
    if path == "/v1/reconciliations":
        reconciliation_range(body)
