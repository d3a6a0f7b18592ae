"""What a serving process loads: the libraries only some requests need (the webhook client,
the PDF and barcode libraries, SMTP, Stripe's library) load when first used, not in every
uvicorn worker (issues 41 and 48: RSS per worker)."""

from __future__ import annotations

import os
import subprocess
import sys

LOADED_WHEN_USED = ("aiohttp", "reportlab", "PIL", "segno", "barcode", "aiosmtplib", "stripe")

# A worker as uvicorn runs it: the app from the environment, its lifespan (background work
# included), a request answered.
SERVE = f"""
import sys
from starlette.testclient import TestClient
from berth.app import app_from_environment
with TestClient(app_from_environment()) as client:
    assert client.get("/healthz").status_code == 200
print(",".join(name for name in {LOADED_WHEN_USED!r} if name in sys.modules))
"""


def test_a_serving_process_loads_neither_the_webhook_client_nor_the_pdf_libraries_nor_stripe(
    database_url: str,
) -> None:
    env = {key: value for key, value in os.environ.items() if not key.startswith("BERTH_")}
    env |= {"BERTH_DATABASE_URL": database_url, "BERTH_LOG_LEVEL": "WARNING"}
    # Card payments set up, as `berth serve --demo` sets them up (Stripe is never reached here).
    env |= {
        "BERTH_STRIPE_SECRET_KEY": "sk_test_unused",
        "BERTH_STRIPE_PUBLISHABLE_KEY": "pk_test_unused",
        "BERTH_STRIPE_WEBHOOK_SECRET": "whsec_unused",
        "BERTH_STRIPE_API_BASE": "http://127.0.0.1:9",
    }
    done = subprocess.run(
        [sys.executable, "-c", SERVE], env=env, capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == ""
