"""A webhook receiver for trying Berth's deliveries: it checks each delivery's Standard Webhooks
signature with your connection's signing secret and prints one line per delivery.

    python3 docs/examples/receive_webhooks.py --port 8765 --secret whsec_... [--count N] [--timeout S]

It answers 204 to a delivery whose signature verifies and 401 to any other. With --count it
stops after N verified deliveries, and exits with status 1 when they have not all arrived
within --timeout seconds. Standard library only: copy the `verify` function into your own
receiver.
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import hmac
import json
import sys
import time
from http.server import BaseHTTPRequestHandler, HTTPServer
from typing import Any

TOLERANCE_SECONDS = 5 * 60  # refuse deliveries signed longer ago than this (replays)


def verify(secret: str, headers: Any, body: bytes) -> bool:
    """True when `webhook-signature` holds a valid signature of this body by `secret`.

    Berth signs `{webhook-id}.{webhook-timestamp}.{body}` with HMAC-SHA256, keyed by the
    secret's base64 part (after `whsec_`), and sends `v1,` + base64 of the digest. While a
    secret is being rotated the header carries several signatures, separated by spaces: any
    one of them that verifies is enough."""
    message_id = headers.get("webhook-id", "")
    timestamp = headers.get("webhook-timestamp", "")
    if not timestamp.isdigit() or abs(time.time() - int(timestamp)) > TOLERANCE_SECONDS:
        return False
    key = base64.b64decode(secret.removeprefix("whsec_"))
    signed = f"{message_id}.{timestamp}.".encode() + body
    expected = base64.b64encode(hmac.new(key, signed, hashlib.sha256).digest()).decode()
    for sent in headers.get("webhook-signature", "").split():
        version, _, signature = sent.partition(",")
        if version == "v1" and hmac.compare_digest(signature, expected):
            return True
    return False


def describe(payload: dict[str, Any]) -> str:
    """One line about a delivery: a webhook event, or a mapping notification (the row itself)."""
    if "event" not in payload:
        return f"mapping {payload['resellerReference']}: {payload['productId']} {payload['optionId']}"
    for key in ("booking", "order", "product", "availability"):
        if key in payload:
            subject: dict[str, Any] = payload[key]
            details = (subject.get("status"), subject.get("supplierReference") or subject.get("id"))
            return " ".join([payload["event"], *(str(detail) for detail in details if detail)])
    return str(payload["event"])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--port", type=int, default=8765)
    parser.add_argument("--secret", required=True, help="the connection's signing secret (whsec_...)")
    parser.add_argument("--count", type=int, default=0, help="stop after this many verified deliveries")
    parser.add_argument("--timeout", type=float, default=60, help="with --count: seconds to wait for them")
    args = parser.parse_args()
    received = 0

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            nonlocal received
            body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
            if not verify(args.secret, self.headers, body):
                print("refused: the signature does not verify", flush=True)
                self.send_response(401)
            else:
                received += 1
                print(f"{describe(json.loads(body))} (signature verified)", flush=True)
                self.send_response(204)
            self.end_headers()

        def log_message(self, format: str, *values: Any) -> None:  # quiet: one line per delivery
            pass

    with HTTPServer(("127.0.0.1", args.port), Handler) as server:
        deadline = time.monotonic() + args.timeout
        while not args.count or received < args.count:
            if args.count:
                server.timeout = deadline - time.monotonic()
                if server.timeout <= 0:
                    print(f"only {received} of {args.count} deliveries arrived", file=sys.stderr)
                    return 1
            server.handle_request()
    return 0


if __name__ == "__main__":
    sys.exit(main())
