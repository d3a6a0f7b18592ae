"""`berth staff` as a subprocess: create (a one-time password), token (an admin API token,
shown once), list and disable; what they print works against the server on the same database,
and mistakes are one clear line."""

from __future__ import annotations

import asyncio
import json
import subprocess
from typing import Any

import httpx

from berth.container import Services
from tests.backoffice.helpers import csrf_of
from tests.berth_process import berth_environment, run_berth
from tests.conftest import ADMIN


async def run(*args: str, database_url: str, **env: str) -> subprocess.CompletedProcess[str]:
    return await asyncio.to_thread(
        lambda: run_berth(args, berth_environment(database_url, **env), timeout=60)
    )


def last_line(output: str) -> str:
    return output.strip().splitlines()[-1].strip()


def one_line_error(result: subprocess.CompletedProcess[str]) -> str:
    assert result.returncode == 1, (result.stdout, result.stderr)
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and "Traceback" not in result.stderr, result.stderr
    return lines[0]


async def test_create_token_list_and_disable(
    client: httpx.AsyncClient, services: Services, database_url: str
) -> None:
    created = await run("staff", "create", "Ana@Example.com", "--role", "operator", database_url=database_url)
    assert created.returncode == 0, created.stderr
    assert "Staff account ana@example.com created (operator" in created.stdout
    password = last_line(created.stdout)
    assert len(password) == 16

    issued = await run("staff", "token", "ana@example.com", database_url=database_url)
    assert issued.returncode == 0, issued.stderr
    token = last_line(issued.stdout)
    assert token.startswith("berth_staff_")
    bearer = {"Authorization": f"Bearer {token}"}
    me = (await client.get("/admin/api/me", headers=bearer)).json()
    assert me["name"] == "ana@example.com" and me["role"] == "operator"

    listed = await run("staff", "list", "--json", database_url=database_url)
    assert listed.returncode == 0, listed.stderr
    (member,) = json.loads(listed.stdout)
    assert member["email"] == "ana@example.com" and member["role"] == "operator" and member["active"]
    assert member["tokenHint"] == "…" + token[-4:]
    assert token not in listed.stdout and password not in listed.stdout
    table = await run("staff", "list", database_url=database_url, COLUMNS="80")
    assert "ana@example.com" in table.stdout and member["id"] in table.stdout and "active" in table.stdout

    # The one-time password signs in to the back office, which asks for a password of one's own.
    form = await client.get("/admin/sign-in")
    signed_in = await client.post(
        "/admin/sign-in",
        data={"email": "ana@example.com", "password": password, "csrf_token": csrf_of(form.text)},
    )
    assert signed_in.status_code == 303 and signed_in.headers["location"] == "/admin/password"
    assert (await client.get("/admin")).headers["location"] == "/admin/password"

    disabled = await run("staff", "disable", "ana@example.com", database_url=database_url)
    assert disabled.returncode == 0, disabled.stderr
    assert "ana@example.com disabled" in disabled.stdout
    assert (await client.get("/admin/api/me", headers=bearer)).json()["error"] == "UNAUTHORIZED"
    assert (await client.get("/admin/password")).headers["location"].startswith("/admin/sign-in")
    after = json.loads((await run("staff", "list", "--json", database_url=database_url)).stdout)
    assert after[0]["active"] is False and after[0]["tokenHint"] is None

    trail: dict[str, Any] = (await client.get("/admin/api/audit", headers=ADMIN)).json()
    assert [(e["actor"], e["action"]) for e in reversed(trail["entries"])] == [
        ("command line", "staff.create"),
        ("command line", "staff.token"),
        ("command line", "staff.disable"),
    ]


async def test_mistakes_are_one_clear_line(database_url: str) -> None:
    bad_role = await run("staff", "create", "ana@example.com", "--role", "boss", database_url=database_url)
    assert bad_role.returncode == 2 and "viewer" in bad_role.stderr and "admin" in bad_role.stderr
    no_role = await run("staff", "create", "ana@example.com", database_url=database_url)
    assert no_role.returncode == 2 and "--role" in no_role.stderr
    assert "not an email address" in one_line_error(
        await run("staff", "create", "ana", "--role", "viewer", database_url=database_url)
    )
    assert (await run("staff", "create", "ana@example.com", "--role", "viewer", database_url=database_url)).returncode == 0  # fmt: skip
    again = await run("staff", "create", "ANA@example.com", "--role", "admin", database_url=database_url)
    assert "already exists" in one_line_error(again)
    for command in ("token", "disable"):
        unknown = await run("staff", command, "bob@example.com", database_url=database_url)
        line = one_line_error(unknown)
        assert "No member of staff with the email or id 'bob@example.com'" in line
        assert "berth staff list" in line
    assert (await run("staff", "disable", "ana@example.com", database_url=database_url)).returncode == 0
    assert "already disabled" in one_line_error(
        await run("staff", "disable", "ana@example.com", database_url=database_url)
    )
    assert "disabled" in one_line_error(
        await run("staff", "token", "ana@example.com", database_url=database_url)
    )
