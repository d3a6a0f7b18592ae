"""The `berth` command line against a real database."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from berth.cli import app
from berth.demo.loader import demo_catalog_text
from tests.test_catalog_import import MINIMAL

runner = CliRunner()


@pytest.fixture
def env(database_url: str, monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv("BERTH_DATABASE_URL", database_url)
    monkeypatch.setenv("BERTH_LOG_LEVEL", "WARNING")
    return database_url


def test_db_upgrade_and_demo(env: str) -> None:
    assert runner.invoke(app, ["db", "upgrade"]).exit_code == 0
    result = runner.invoke(app, ["demo"])
    assert result.exit_code == 0, result.output
    assert "demo-reseller-a" in result.output
    listed = runner.invoke(app, ["connection", "list"])
    assert "Demo reseller A" in listed.output and "Demo reseller B" in listed.output
    assert "demo-reseller-a" not in listed.output  # keys are never shown after creation


def test_catalog_import_export(env: str, tmp_path: object) -> None:
    from pathlib import Path

    assert isinstance(tmp_path, Path)
    good = tmp_path / "catalog.yaml"
    good.write_text(MINIMAL)
    result = runner.invoke(app, ["catalog", "import", str(good)])
    assert result.exit_code == 0, result.output
    assert "Imported 1 product(s)" in result.output
    exported = runner.invoke(app, ["catalog", "export"])
    assert exported.exit_code == 0
    assert "id: walk" in exported.stdout and "'10:00'" in exported.stdout

    bad = tmp_path / "bad.yaml"
    bad.write_text(demo_catalog_text().replace("type: CHILD", "type: KID", 1))
    result = runner.invoke(app, ["catalog", "import", str(bad)])
    assert result.exit_code == 1
    assert "1 problem(s); nothing was imported" in result.stderr
    assert "products[0].options[0].units[1].type" in result.stderr
    assert runner.invoke(app, ["catalog", "export"]).stdout == exported.stdout


def test_connection_create_and_revoke(env: str) -> None:
    created = runner.invoke(app, ["connection", "create", "Ticket Hub"])
    assert created.exit_code == 0, created.output
    key = created.stdout.strip().splitlines()[-1]
    assert key.startswith("berth_")
    again = runner.invoke(app, ["connection", "create", "Ticket Hub"])
    assert again.exit_code == 1 and "already exists" in again.stderr
    revoked = runner.invoke(app, ["connection", "revoke", "Ticket Hub"])
    assert revoked.exit_code == 0 and "revoked" in revoked.output
    assert "revoked" in runner.invoke(app, ["connection", "list"]).output
    missing = runner.invoke(app, ["connection", "revoke", "Nobody"])
    assert missing.exit_code == 1 and "No connection" in missing.stderr
