"""The gate scanner answers for the ticket in front of it (issue 49 §1), in headless Chromium
whose fake camera films tickets as Berth renders them (their PDFs, drawn by pdfium, cut around
the QR code) in the motions met at a gate: a ticket held in view while staff type another code;
a ticket shown, taken away and shown again; two tickets of one party shown in turns. And
another day's ticket, admitted only when staff say so (§2). The page records every change of
its answer (`RECORD_SCREENS`), so a wrong answer that showed for a moment is caught; phone
screenshots of each situation go to docs/screenshots/."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest
from playwright.sync_api import Browser, Page, Playwright, expect, sync_playwright

from tests.backoffice.fake_camera import blank_picture, motion_video, ticket_picture
from tests.backoffice.server import berth_on_clock
from tests.backoffice.test_browser import ADMIN, SCREENSHOTS, open_page, sign_in
from tests.backoffice.test_checkin_browser import (
    CLOCK,
    admissions,
    book,
    departures,
    film,
    filming,
    on_the_day,
    open_scanner,
    phone_shot,
    shot,
)
from tests.chromium import CHROMIUM, CHROMIUM_ARGS

pytestmark = pytest.mark.browser

# Every answer the page puts on the screen, in order (a change of colour, words or party).
RECORD_SCREENS = """
window.__screens = [];
document.addEventListener("DOMContentLoaded", () => {
  const result = document.getElementById("gate-result");
  if (!result) {
    return;
  }
  const note = () => {
    const lead = document.querySelector("#gate-party .gate-lead");
    const now = {
      kind: result.className,
      verdict: document.getElementById("gate-verdict").textContent,
      lead: lead ? lead.textContent : "",
    };
    const last = window.__screens[window.__screens.length - 1];
    if (!last || last.kind !== now.kind || last.verdict !== now.verdict || last.lead !== now.lead) {
      window.__screens.push(now);
    }
  };
  new MutationObserver(note).observe(result, { subtree: true, childList: true, attributes: true, characterData: true });
  note();
});
"""


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    with berth_on_clock(tmp_path_factory.mktemp("checkin-gate") / "berth.db", CLOCK) as base:
        yield base


@pytest.fixture(scope="module")
def playwright() -> Iterator[Playwright]:
    with sync_playwright() as started:
        yield started


def pdf_of(document: dict[str, Any]) -> bytes:
    """The PDF of a voucher or a ticket, from the URL OCTO gives the reseller."""
    url = next(o["deliveryValue"] for o in document["deliveryOptions"] if o["deliveryFormat"] == "PDF_URL")
    response = httpx.get(url)
    assert response.status_code == 200 and response.content.startswith(b"%PDF"), response.text
    return response.content


def screens(page: Page) -> list[dict[str, str]]:
    found: list[dict[str, str]] = page.evaluate("window.__screens")
    return found


def scans_sent(page: Page) -> list[str]:
    """The scans the page sends to the server from now on, answered (the list grows)."""
    sent: list[str] = []
    page.on(
        "requestfinished", lambda r: sent.append(r.url) if r.url.endswith("/admin/checkin/scan") else None
    )
    return sent


def until(page: Page, done: Callable[[], bool], what: Callable[[], str], seconds: float = 45) -> None:
    """Wait for `done()`; `what()` says where things stand if it never comes."""
    waited = 0.0
    while not done():
        assert waited < seconds, f"waited {seconds} s: {what()}"
        page.wait_for_timeout(250)
        waited += 0.25


def type_code(page: Page, code: str) -> None:
    page.fill("#gate-code", code)
    page.get_by_role("button", name="Check").click()


def typed_voucher(page: Page, family: dict[str, Any], *, online: bool) -> None:
    """Staff type a party of two's voucher while another ticket is in view: "Who is here?"
    stays, untouched by the camera, until they admit the two."""
    verdict, lead = page.locator("#gate-verdict"), page.locator(".gate-lead")
    mark = len(screens(page))
    type_code(page, family["supplierReference"])
    expect(verdict).to_have_text("Who is here?")
    expect(lead).to_contain_text(family["contact"]["fullName"])
    if online:
        phone_shot(page, "typed-choose")
    page.wait_for_timeout(6_000)  # the other ticket in view all along
    expect(verdict).to_have_text("Who is here?")
    expect(page.locator(".gate-units input:checked")).to_have_count(2)
    assert [s["verdict"] for s in screens(page)[mark:]] == ["Who is here?"]
    page.get_by_role("button", name="Admit 2 guests").click()
    expect(verdict).to_have_text("Admitted 2 of 2 in this party")
    expect(lead).to_contain_text(family["contact"]["fullName"])
    if not online:
        expect(page.locator("#gate-detail")).to_contain_text("Offline")


def test_a_typed_code_wins_over_the_camera(server: str, playwright: Playwright, tmp_path: Path) -> None:
    """The camera answered Grace Hopper's ticket, which stays in view. Staff type Alan Turing's
    code: his green shows and the camera does not send hers again (before, 200 ms later the
    page re-sent her ticket and showed red "Already admitted" over his green). A typed voucher's
    "Who is here?" stays while her ticket is in view."""
    slot = departures(server, 1)[0]
    held = book(server, slot, 1, "Grace Hopper")
    typed = book(server, slot, 1, "Alan Turing")
    family = book(server, slot, 2, "Ada Lovelace")
    video = motion_video([(ticket_picture(pdf_of(held["unitItems"][0]["ticket"])), 1.0)], tmp_path / "a.y4m")
    browser = filming(playwright, video)
    try:
        page, problems = open_scanner(browser, server, slot, script=RECORD_SCREENS)
        sent = scans_sent(page)
        verdict, result, lead = (
            page.locator("#gate-verdict"),
            page.locator("#gate-result"),
            page.locator(".gate-lead"),
        )
        film(page, lambda: expect(verdict).to_have_text("Admitted 1 of 1 in this party", timeout=20_000))
        expect(lead).to_contain_text("Grace Hopper")

        mark = len(screens(page))
        type_code(page, typed["supplierReference"])
        expect(result).to_have_class("gate-result ok")
        expect(lead).to_contain_text("Alan Turing")
        phone_shot(page, "typed-wins")
        page.wait_for_timeout(6_000)  # her ticket in view all along; his green has faded since
        after = screens(page)[mark:]
        assert [s for s in after if "Already admitted" in s["verdict"] or "Grace Hopper" in s["lead"]] == []
        assert [s["verdict"] for s in after if s["kind"] == "gate-result ok"] == [
            "Admitted 1 of 1 in this party"
        ]
        assert len(sent) == 2

        typed_voucher(page, family, online=True)
        assert len(sent) == 3
        for booking in (held, typed, family):
            assert len(admissions(server, booking)) == 1
        page.context.close()
        assert problems == []
    finally:
        browser.close()


def test_a_typed_voucher_wins_over_the_camera_offline(
    server: str, playwright: Playwright, tmp_path: Path
) -> None:
    """Offline, the page decides from its guest list: a typed voucher's "Who is here?" stays
    while a ticket admitted before is in view (before, the camera's ticket replaced it with red
    "Already admitted" from the kept list)."""
    slot = departures(server, 5)[4]
    held = book(server, slot, 1, "Joan Clarke")
    family = book(server, slot, 2, "Mary Shelley")
    video = motion_video([(ticket_picture(pdf_of(held["unitItems"][0]["ticket"])), 1.0)], tmp_path / "b.y4m")
    browser = filming(playwright, video)
    try:
        page, problems = open_scanner(browser, server, slot, script=RECORD_SCREENS)
        verdict = page.locator("#gate-verdict")
        film(page, lambda: expect(verdict).to_have_text("Admitted 1 of 1 in this party", timeout=20_000))
        page.context.set_offline(True)
        typed_voucher(page, family, online=False)
        page.context.set_offline(False)
        page.evaluate("window.dispatchEvent(new Event('online'))")
        expect(page.locator("#gate-sync-list li.synced")).to_have_count(1, timeout=15_000)
        for booking in (held, family):
            assert len(admissions(server, booking)) == 1
        page.context.close()
        assert problems == []
    finally:
        browser.close()


def test_a_ticket_shown_again_is_a_new_scan(server: str, playwright: Playwright, tmp_path: Path) -> None:
    """A ticket shown for 2 s, taken away for 4 s, shown again, over and over: the first showing
    is admitted, its green fades before the ticket comes back, and each later showing is a new
    scan that answers "Already admitted" (before, one scan was sent and the screen stayed green
    with nothing in view)."""
    slot = departures(server, 2)[1]
    guest = book(server, slot, 1, "Tommy Flowers")
    picture = ticket_picture(pdf_of(guest["unitItems"][0]["ticket"]))
    video = motion_video([(picture, 2.0), (blank_picture(), 4.0)], tmp_path / "again.y4m")
    browser = filming(playwright, video)
    try:
        page, problems = open_scanner(browser, server, slot, script=RECORD_SCREENS)
        sent = scans_sent(page)
        verdict = page.locator("#gate-verdict")
        film(page, lambda: expect(verdict).to_have_text("Admitted 1 of 1 in this party", timeout=20_000))
        until(page, lambda: len(sent) >= 3, lambda: f"{len(sent)} scan(s) sent")  # shown twice more
        expect(page.locator("#gate-result")).to_have_class("gate-result bad")
        expect(verdict).to_have_text("Already admitted")
        phone_shot(page, "shown-again")
        page.get_by_role("button", name="Stop camera").click()
        shown = [(s["kind"], s["verdict"]) for s in screens(page)]
        green = shown.index(("gate-result ok", "Admitted 1 of 1 in this party"))
        assert shown[green + 1] == ("gate-result idle faded", "Ready to scan")  # faded before it came back
        assert set(shown[green + 2 :]) == {("gate-result bad", "Already admitted")}
        assert len(admissions(server, guest)) == 1
        page.context.close()
        assert problems == []
    finally:
        browser.close()


def test_two_codes_in_view_are_each_answered_once(
    server: str, playwright: Playwright, tmp_path: Path
) -> None:
    """Two tickets of one party shown in turns, a second each: each gets its own green, and
    neither is sent again while they go on taking turns (before, green twice, then red "Already
    admitted" for the rest, with 20 scans sent)."""
    slot = departures(server, 3)[2]
    party = book(server, slot, 2, "Dorothy Vaughan")
    first, second = (ticket_picture(pdf_of(u["ticket"])) for u in party["unitItems"])
    video = motion_video([(first, 1.0), (second, 1.0)], tmp_path / "turns.y4m")
    browser = filming(playwright, video)
    try:
        page, problems = open_scanner(browser, server, slot, script=RECORD_SCREENS)
        sent = scans_sent(page)
        verdict = page.locator("#gate-verdict")
        film(page, lambda: expect(verdict).to_have_text("Admitted 2 of 2 in this party", timeout=20_000))
        phone_shot(page, "two-codes")
        page.wait_for_timeout(10_000)  # five more turns each
        page.get_by_role("button", name="Stop camera").click()
        assert len(sent) == 2
        greens = [s["verdict"] for s in screens(page) if s["kind"] == "gate-result ok"]
        assert greens == ["Admitted 1 of 2 in this party", "Admitted 2 of 2 in this party"]
        assert not [s for s in screens(page) if s["kind"] == "gate-result bad"]
        assert len(admissions(server, party)) == 2  # one scan per ticket
        page.context.close()
        assert problems == []
    finally:
        browser.close()


@pytest.fixture(scope="module")
def browser(playwright: Playwright) -> Iterator[Browser]:
    launched = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
    yield launched
    launched.close()


def test_another_days_ticket_asks_before_it_admits(server: str, browser: Browser) -> None:
    """The gate opened days before the departure: a ticket is amber "Another day", admitted
    only when staff press "Admit anyway", online and offline; the audit trail names the day."""
    slot = departures(server, 4)[3]
    guest = book(server, slot, 1, "Margaret Hamilton")
    family = book(server, slot, 2, "Katherine Johnson")
    page, problems = open_scanner(browser, server, slot, day=False)  # the server's today: days before
    sent = scans_sent(page)
    verdict, result = page.locator("#gate-verdict"), page.locator("#gate-result")
    type_code(page, guest["unitItems"][0]["supplierReference"])
    expect(result).to_have_class("gate-result warn")
    expect(verdict).to_have_text("Another day")
    expect(page.locator("#gate-detail")).to_contain_text("not today")
    phone_shot(page, "another-day")
    assert len(sent) == 1 and admissions(server, guest) == []
    page.get_by_role("button", name="Admit anyway").click()
    expect(result).to_have_class("gate-result ok")
    expect(verdict).to_have_text("Admitted 1 of 1 in this party")

    page.context.set_offline(True)
    type_code(page, family["supplierReference"])
    page.get_by_role("button", name="Admit 2 guests").click()
    expect(verdict).to_have_text("Another day")
    expect(page.locator("#gate-detail")).to_contain_text("Offline")
    page.get_by_role("button", name="Admit anyway").click()
    expect(verdict).to_have_text("Admitted 2 of 2 in this party")
    page.context.set_offline(False)
    page.evaluate("window.dispatchEvent(new Event('online'))")
    expect(page.locator("#gate-sync-list li.synced")).to_have_count(1, timeout=15_000)
    day = slot[:10]
    for booking in (guest, family):
        assert [e["details"]["anotherDay"] for e in admissions(server, booking)] == [day]
    status = httpx.get(server + f"/admin/api/bookings/{family['id']}", headers=ADMIN).json()["booking"][
        "status"
    ]
    assert status == "REDEEMED"
    page.context.close()
    assert problems == []


def test_a_supervisor_undoes_an_admission_from_the_booking_page(server: str, browser: Browser) -> None:
    """An hour after the gate admitted a party (its own undo lasts ten minutes), the booking's
    page offers to undo the admission of each ticket through the gate, with a reason."""
    slot = departures(server, 6)[5]
    party = book(server, slot, 2, "Annie Easley")
    second = party["unitItems"][1]
    on_the_day(slot)
    scan = {"code": party["supplierReference"], "nonce": uuid.uuid4().hex, "device": "pier-1"}
    assert httpx.post(server + "/admin/api/checkin", json=scan, headers=ADMIN).json()["result"] == "ADMITTED"
    CLOCK.now += timedelta(hours=1)
    page, problems = open_page(browser, server)
    sign_in(page)
    page.goto(f"/admin/bookings/{party['id']}")
    form = page.locator("form.undo-admission")
    expect(form.locator("input[name=ticket]")).to_have_count(2)
    expect(page.locator("#tickets")).to_contain_text("by admin token on pier-1")
    form.locator(f"input[value='{second['uuid']}']").check()
    page.fill("#undo-reason", "Second guest turned back at the pier")
    shot(page, "booking-undo-admission")
    form.get_by_role("button", name="Undo the admission").click()
    expect(page.locator(".notice.success")).to_have_text(
        f"Booking {party['supplierReference']}: the admission of {second['supplierReference']} is undone "
        "(REDEEMED → CONFIRMED); the reason is in its history."
    )
    expect(form.locator("input[name=ticket]")).to_have_count(1)  # only the ticket still through
    expect(page.locator("table.history")).to_contain_text("Second guest turned back at the pier")
    page.context.close()
    assert problems == []
