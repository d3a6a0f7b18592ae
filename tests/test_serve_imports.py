"""What a serving process loads: the libraries only some requests need (the webhook client,
the PDF and barcode libraries, SMTP) load when first used, not in every uvicorn worker
(issue 41: RSS per worker)."""

from __future__ import annotations

import os
import subprocess
import sys

LOADED_WHEN_USED = ("aiohttp", "reportlab", "PIL", "segno", "barcode", "aiosmtplib")

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


def test_a_serving_process_loads_neither_the_webhook_client_nor_the_pdf_libraries(database_url: str) -> None:
    env = {key: value for key, value in os.environ.items() if not key.startswith("BERTH_")}
    env |= {"BERTH_DATABASE_URL": database_url, "BERTH_LOG_LEVEL": "WARNING"}
    done = subprocess.run(
        [sys.executable, "-c", SERVE], env=env, capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == ""
