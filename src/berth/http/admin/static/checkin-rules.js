// The gate scanner's rules for what the camera may send and what may take the screen, apart
// from the page: no DOM, no clock of its own (every call is given the time in milliseconds), so
// they can be read, and tested, on their own (tests/backoffice/test_checkin_rules.py).
//
// - A code the camera reads is sent once per showing: while it stays in view (read again
//   within LEAVE_MS) it is not sent again, whatever else the camera reads in between; once it
//   has left the view, showing it again is a new scan.
// - A typed code wins over the camera until staff have seen its answer: from the moment it is
//   typed until its answer has been on the screen for SEEN_MS (a question, "Who is here?",
//   until staff answer it), the camera sends nothing new and no camera answer takes the screen.
//   A camera answer that comes meanwhile waits and is shown after.
// - A green answer fades after GREEN_MS: the screen is ready again, so that a later guest never
//   walks through on an old green.
"use strict";

(() => {
  const LEAVE_MS = 2500;
  const SEEN_MS = 3000;
  const GREEN_MS = 3000;

  // `key`: how two readings are known for the same code (the page reads them as references).
  function gateRules(key = (code) => code) {
    const inView = new Map(); // key -> { lastSeen, answered }
    let typed = null; // the typed turn that has the screen: { id, shownAt, asks }
    let turns = 0;

    function forgetGone(now) {
      for (const [code, sight] of inView) {
        if (now - sight.lastSeen > LEAVE_MS) {
          inView.delete(code);
        }
      }
    }

    // The rule the issue names: a typed code wins until staff have seen its answer.
    function typedHoldsScreen(now) {
      if (typed === null) {
        return false;
      }
      if (typed.shownAt === null || typed.asks) {
        return true; // its answer has not come yet, or it asks staff a question
      }
      return now - typed.shownAt < SEEN_MS;
    }

    function turn(source) {
      turns += 1;
      return { id: turns, source };
    }

    return {
      LEAVE_MS,
      SEEN_MS,
      GREEN_MS,

      // The camera read `code`: a turn to send, or null (the reason in `why` for the tests).
      sighted(code, now) {
        forgetGone(now);
        const known = key(code);
        let sight = inView.get(known);
        if (sight) {
          sight.lastSeen = now;
          if (sight.answered) {
            return { send: false, why: "in view" };
          }
        } else {
          sight = { lastSeen: now, answered: false };
          inView.set(known, sight);
        }
        if (typedHoldsScreen(now)) {
          return { send: false, why: "typed first" }; // read again once the typed answer was seen
        }
        sight.answered = true;
        return { send: true, turn: turn("camera") };
      },

      // Staff typed `code` (or picked a party from the list): it has the screen from now on.
      typed(code, now) {
        forgetGone(now);
        const made = turn("typed");
        typed = { id: made.id, shownAt: null, asks: false };
        // The same code in front of the camera is this showing, not a new one.
        inView.set(key(code), { lastSeen: now, answered: true });
        return made;
      },

      // A turn that carries on an earlier one (staff admit the guests they ticked, or admit
      // another day's ticket anyway): the same source, and the screen stays its own.
      follow(earlier) {
        const made = turn(earlier.source);
        if (earlier.source === "typed") {
          typed = { id: made.id, shownAt: null, asks: false };
        }
        return made;
      },

      // Whether the answer of `made` may take the screen now (a camera answer waits while a
      // typed one has it).
      mayShow(made, now) {
        return made.source === "typed" || !typedHoldsScreen(now);
      },

      // The answer of `made` went on the screen; `asks`: it is a question for staff. Answers
      // how long until it fades (null: it stays until the next answer).
      shown(made, { kind, asks = false }, now) {
        if (made.source === "typed" && typed !== null && typed.id === made.id) {
          typed.shownAt = now;
          typed.asks = asks;
        }
        return kind === "ok" ? GREEN_MS : null;
      },

      // How long until a typed answer has been seen (0: it has), for a camera answer waiting.
      typedSeenIn(now) {
        if (!typedHoldsScreen(now)) {
          return 0;
        }
        return typed.shownAt === null || typed.asks ? null : SEEN_MS - (now - typed.shownAt);
      },

      // Staff tapped the picture: every code in view is read again, and the camera may answer.
      readAgain() {
        inView.clear();
        typed = null;
      },

      // Whether `code` is in front of the camera, as last read.
      inView(code, now) {
        forgetGone(now);
        return inView.has(key(code));
      },
    };
  }

  window.BerthGate = { gateRules };
})();
