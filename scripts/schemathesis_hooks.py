# The fuzzer's hooks (scripts/schemathesis.sh). A client sends each new request under a key of
# its own; the fuzzer draws few distinct keys, so most of its requests would reuse one with
# another body and be refused as idempotency conflicts before their data is looked at. A
# well-formed key is replaced with a fresh one; a malformed one is kept, to be refused.
import re
import uuid

import schemathesis

WELL_FORMED = re.compile(r"^[!-~]{1,255}$")


@schemathesis.hook
def before_call(context, case, **kwargs):
    headers = case.headers or {}
    key = headers.get("Idempotency-Key")
    if isinstance(key, str) and WELL_FORMED.match(key):
        headers["Idempotency-Key"] = str(uuid.uuid4())
        case.headers = headers
