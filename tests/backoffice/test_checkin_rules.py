"""The gate scanner's rules (`checkin-rules.js`) on their own, in Chromium, with the times given
to them: a code once per showing, a typed code first until its answer was seen, a green that
fades. No server, no camera: each case is a script of readings and answers at given times."""

from __future__ import annotations

from collections.abc import Iterator
from importlib import resources
from typing import Any

import pytest
from playwright.sync_api import Page, sync_playwright

from tests.chromium import CHROMIUM, CHROMIUM_ARGS

pytestmark = pytest.mark.browser
RULES = resources.files("berth.http.admin").joinpath("static", "checkin-rules.js").read_text()


@pytest.fixture(scope="module")
def page() -> Iterator[Page]:
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        tab = browser.new_page()
        tab.add_script_tag(content=RULES)
        yield tab
        browser.close()


def run(page: Page, script: str) -> Any:
    """`script`'s value, with `rules` a fresh set of the gate's rules and `sent(code, t)` what
    the camera's reading of `code` at `t` ms leads to: true (sent) or the reason it is not."""
    return page.evaluate(
        """(script) => {
          const rules = window.BerthGate.gateRules();
          const sent = (code, t) => { const s = rules.sighted(code, t); return s.send ? true : s.why; };
          return new Function("rules", "sent", script)(rules, sent);
        }""",
        script,
    )


def test_a_code_is_sent_once_per_showing(page: Page) -> None:
    held = run(page, "return [0, 150, 300, 2000, 4400, 6800].map((t) => sent('A', t));")
    assert held == [True, "in view", "in view", "in view", "in view", "in view"]  # read all along
    again = run(page, "return [sent('A', 0), sent('A', 2000), sent('A', 6000), sent('A', 6150)];")
    assert again == [True, "in view", True, "in view"]  # 4 s out of view: a new showing


def test_two_codes_in_turns_are_each_sent_once(page: Page) -> None:
    turns = run(
        page,
        "const out = []; for (let t = 0; t < 20000; t += 1000) out.push(sent(t % 2000 ? 'B' : 'A', t)); return out;",
    )
    assert turns == [True, True] + ["in view"] * 18


def test_a_typed_code_has_the_screen_until_its_answer_was_seen(page: Page) -> None:
    seen = run(
        page,
        """
        const out = [sent('A', 0)];
        const typed = rules.typed('B', 1000);
        out.push(sent('A', 1100));  // still in view from before: never again
        out.push(sent('C', 1200));  // a new code while B's answer is awaited
        out.push(rules.mayShow({ source: 'camera' }, 1300));
        out.push(rules.mayShow(typed, 1300));
        out.push(rules.shown(typed, { kind: 'ok' }, 1400));  // green: fades after so long
        out.push(rules.typedSeenIn(2400));
        out.push(sent('C', 2500));  // B's answer not yet seen long enough
        out.push(rules.mayShow({ source: 'camera' }, 4400));
        out.push(sent('C', 4450));  // seen: C, still in view, is read now
        return out;
        """,
    )
    assert seen == [True, "in view", "typed first", False, True, 3000, 2000, "typed first", True, True]


def test_a_typed_question_waits_for_staff(page: Page) -> None:
    asked = run(
        page,
        """
        const typed = rules.typed('VOUCHER', 0);
        const out = [rules.shown(typed, { kind: 'idle', asks: true }, 100)];  // Who is here?
        out.push(sent('A', 60000));  // a minute on: still the question's
        const admit = rules.follow(typed);  // staff admit the guests ticked
        out.push(admit.source, rules.mayShow({ source: 'camera' }, 60100));
        rules.shown(admit, { kind: 'ok' }, 60200);
        out.push(sent('A', 63300));
        return out;
        """,
    )
    assert asked == [None, "typed first", "typed", False, True]


def test_a_tap_on_the_picture_reads_every_code_again(page: Page) -> None:
    tapped = run(
        page,
        """
        const out = [sent('A', 0), sent('A', 500)];
        rules.typed('B', 600);
        rules.readAgain();
        out.push(sent('A', 700), sent('B', 800), rules.inView('A', 900), rules.inView('A', 5000));
        return out;
        """,
    )
    assert tapped == [True, "in view", True, True, True, False]


def test_only_green_fades(page: Page) -> None:
    fades = run(
        page,
        "const t = rules.typed('X', 0); return ['ok', 'bad', 'warn', 'idle'].map((kind) => rules.shown(t, { kind }, 10));",
    )
    assert fades == [3000, None, None, None]
