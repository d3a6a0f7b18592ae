// The gate scanner (/admin/checkin/...): scan with the camera (ZXingGate, the vendored
// decoder: ZXing-C++ as WebAssembly) or type a code; the server admits. The departure's guest
// list is kept in this browser, so when the network drops the page decides from it and queues
// each admission with its nonce, then sends the queue when the network is back and shows what
// the server said. What the camera may send and what may take the screen are the rules of
// checkin-rules.js: a code once per showing, a typed code first until its answer was seen, a
// green answer that fades.
"use strict";

(() => {
  const root = document.getElementById("gate");
  if (!root) {
    return;
  }
  const gate = JSON.parse(root.dataset.gate);
  const csrf = root.dataset.csrf;
  const mayAdmit = root.dataset.mayAdmit === "yes";
  const rules = window.BerthGate.gateRules((code) => asReference(code));
  const clockNow = () => performance.now();
  const PREFIX = "berth-gate:";
  const listKey = `${PREFIX}departure:${gate.productId}|${gate.optionId}|${gate.availabilityId}`;
  const queueKey = `${PREFIX}queue`;
  const logKey = `${PREFIX}log`;
  const $ = (id) => document.getElementById(id);
  const el = {
    result: $("gate-result"),
    verdict: $("gate-verdict"),
    detail: $("gate-detail"),
    party: $("gate-party"),
    admitted: $("gate-admitted"),
    expected: $("gate-expected"),
    count: $("gate-count"),
    waiting: $("gate-waiting"),
    waitingList: $("gate-waiting-list"),
    sync: $("gate-sync"),
    syncList: $("gate-sync-list"),
    net: $("gate-net"),
    form: $("gate-form"),
    code: $("gate-code"),
    video: $("gate-video"),
    hint: $("gate-hint"),
    camera: $("gate-camera"),
    device: $("gate-device"),
    kept: $("gate-kept"),
  };

  // --- what this browser keeps ----------------------------------------------------------------

  const read = (key, fallback) => {
    try {
      const value = JSON.parse(localStorage.getItem(key));
      return value === null ? fallback : value;
    } catch {
      return fallback;
    }
  };
  const write = (key, value) => localStorage.setItem(key, JSON.stringify(value));
  const forgetAll = () => {
    for (const key of Object.keys(localStorage)) {
      if (key.startsWith(PREFIX)) {
        localStorage.removeItem(key);
      }
    }
  };

  let device = localStorage.getItem(`${PREFIX}device`);
  if (!device) {
    device = `phone-${Math.random().toString(36).slice(2, 6)}`;
    localStorage.setItem(`${PREFIX}device`, device);
  }
  el.device.textContent = device;

  let list = read(listKey, null); // {departure, expected, admitted, parties, keptAt}
  // Times as the departure's own clock says them, on the 24-hour clock, whatever the phone's
  // zone and language.
  const clock = new Intl.DateTimeFormat("en-GB", {
    timeZone: root.dataset.zone,
    hour: "2-digit",
    minute: "2-digit",
    hourCycle: "h23",
  });
  const time = (iso) => (iso ? clock.format(new Date(iso)) : "");
  // The phone's date at the departure's place, `2026-06-04`.
  const phoneDay = () =>
    new Intl.DateTimeFormat("en-CA", { timeZone: root.dataset.zone, year: "numeric", month: "2-digit", day: "2-digit" }).format(new Date());
  const nonce = () =>
    window.crypto && crypto.randomUUID
      ? crypto.randomUUID().replace(/-/g, "")
      : Array.from({ length: 32 }, () => Math.floor(Math.random() * 16).toString(16)).join("");

  // --- talking to the server ------------------------------------------------------------------

  class Offline extends Error {}
  class SignedOut extends Error {}

  async function call(method, path, body) {
    let response;
    try {
      response = await fetch(path, {
        method,
        credentials: "same-origin",
        headers: { "Content-Type": "application/json", "X-CSRF-Token": csrf },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
    } catch {
      throw new Offline();
    }
    if (response.status >= 500) {
      throw new Offline();
    }
    let answer = null;
    try {
      answer = await response.json();
    } catch {
      throw new Offline();
    }
    if (!response.ok && answer.error === "UNAUTHORIZED") {
      forgetAll(); // the session is over: what was kept goes with it
      throw new SignedOut();
    }
    return { ok: response.ok, answer };
  }

  function showNet(text) {
    el.net.hidden = !text;
    el.net.textContent = text || "";
  }

  async function loadList() {
    const query = new URLSearchParams(gate).toString();
    try {
      const { ok, answer } = await call("GET", `/admin/checkin/departure?${query}`);
      if (ok) {
        // How many days the server's today is ahead of the phone's (0 where the phone's clock is right).
        const dayShift = answer.today ? Math.round((Date.parse(answer.today) - Date.parse(phoneDay())) / 86400000) : 0;
        list = { ...answer, keptAt: new Date().toISOString(), dayShift };
        applyQueue();
        write(listKey, list);
        showNet("");
      }
    } catch (error) {
      if (error instanceof SignedOut) {
        signedOut();
        return;
      }
      showNet("Offline: scanning from the guest list kept on this device.");
    }
    renderCount();
  }

  function signedOut() {
    list = null;
    show("bad", "Signed out", "Sign in again to go on scanning. The guest list kept here was removed.");
    renderCount();
  }

  // --- the guest list -------------------------------------------------------------------------

  // A code read as one of Berth's references, as the server reads it too: no spaces, and
  // O, I and L (which the references never use) as the digits 0, 1 and 1.
  const asReference = (code) => code.replace(/\s+/g, "").toUpperCase().replace(/O/g, "0").replace(/[IL]/g, "1");

  // What a code names on the kept list: as typed first, then read as a reference.
  function find(raw) {
    if (!list) {
      return null;
    }
    const typed = raw.trim();
    for (const [exact, folded] of [[typed, typed.toUpperCase()], [null, asReference(typed)]]) {
      for (const party of list.parties) {
        if (party.code.toUpperCase() === folded || (exact !== null && party.resellerReference === exact)) {
          return { party, unit: null };
        }
        for (const unit of party.units) {
          if (unit.code.toUpperCase() === folded) {
            return { party, unit };
          }
        }
      }
    }
    return null;
  }

  const travelling = (party) => party.status === "CONFIRMED" || party.status === "REDEEMED";

  function renderCount() {
    if (!list) {
      el.admitted.textContent = "–";
      el.expected.textContent = "–";
      el.kept.textContent = "not yet";
      return;
    }
    let expected = 0;
    let admitted = 0;
    const waiting = [];
    for (const party of list.parties.filter(travelling)) {
      const left = party.units.filter((u) => !u.admitted);
      expected += party.units.length;
      admitted += party.units.length - left.length;
      if (left.length) {
        waiting.push([party, left.length]);
      }
    }
    el.admitted.textContent = admitted;
    el.expected.textContent = expected;
    el.kept.textContent = time(list.keptAt);
    el.waitingList.replaceChildren(
      ...waiting.map(([party, left]) => {
        const item = document.createElement("li");
        const button = document.createElement("button");
        button.type = "button";
        button.className = "quiet";
        button.textContent = `${party.leadName || "No name"} · ${party.code} · ${left} of ${party.units.length} to come`;
        button.addEventListener("click", () => typed(party.code));
        item.append(button);
        return item;
      }),
    );
    if (!waiting.length) {
      const item = document.createElement("li");
      item.className = "muted";
      item.textContent = "Everyone expected is through.";
      el.waitingList.replaceChildren(item);
    }
  }

  // The answer's party replaces the kept one (the server's word is the latest).
  function remember(party) {
    if (!list || !party || party.departure.availabilityId !== gate.availabilityId) {
      return;
    }
    const at = list.parties.findIndex((p) => p.bookingId === party.bookingId);
    if (at >= 0) {
      list.parties[at] = party;
    } else {
      list.parties.push(party);
    }
    applyQueue();
    write(listKey, list);
    renderCount();
  }

  // --- feedback -------------------------------------------------------------------------------

  let audio = null;
  function beep(kind) {
    try {
      audio = audio || new AudioContext();
      const tones = kind === "ok" ? [[880, 0, 0.12]] : kind === "warn" ? [[520, 0, 0.2]] : [[220, 0, 0.18], [220, 0.25, 0.18]];
      for (const [frequency, start, length] of tones) {
        const oscillator = audio.createOscillator();
        const gain = audio.createGain();
        oscillator.frequency.value = frequency;
        gain.gain.value = 0.2;
        oscillator.connect(gain).connect(audio.destination);
        oscillator.start(audio.currentTime + start);
        oscillator.stop(audio.currentTime + start + length);
      }
    } catch {
      // No sound on this device: the colour says it.
    }
    if (navigator.vibrate) {
      navigator.vibrate(kind === "ok" ? 120 : [200, 80, 200]);
    }
  }

  // The booking whose "who is here?" screen is open, and the turn that opened it: reading its
  // voucher again leaves it be.
  let choosing = null;
  let fading = 0;

  // `verdict`: the words, or [the words, what they count] (the count set smaller).
  function show(kind, verdict, detail, party, options = {}) {
    clearTimeout(fading);
    el.result.className = `gate-result ${kind}`;
    const [words, count] = Array.isArray(verdict) ? verdict : [verdict, ""];
    el.verdict.replaceChildren(words);
    if (count) {
      el.verdict.append(" ", line("span", count, "gate-tally"));
    }
    el.detail.textContent = detail || "";
    choosing = options.choose && party ? { bookingId: party.bookingId, turn: options.turn } : null;
    renderParty(party, options);
    if (kind !== "idle" && !options.quiet) {
      beep(kind);
    }
  }

  // Camera answers that came while a typed one had the screen: shown, in order, once that one
  // was seen.
  const waiting = [];

  // The answer of the turn `made` (a scan typed, or read by the camera), as `show` takes it,
  // if the rules let it take the screen now; a green one fades after a few seconds.
  function answer(made, kind, verdict, detail, party, options = {}) {
    const now = clockNow();
    if (!rules.mayShow(made, now)) {
      waiting.push(() => answer(made, kind, verdict, detail, party, options));
      setTimeout(showWaiting, 200);
      return;
    }
    show(kind, verdict, detail, party, { ...options, turn: made });
    const fadeIn = rules.shown(made, { kind, asks: Boolean(options.choose) }, now);
    if (fadeIn !== null) {
      fading = setTimeout(() => fade(options.last || detail, options.code), fadeIn);
    }
  }

  function showWaiting() {
    if (!waiting.length) {
      return;
    }
    if (rules.typedSeenIn(clockNow()) === 0) {
      for (const shown of waiting.splice(0)) {
        shown();
      }
    } else {
      setTimeout(showWaiting, 200);
    }
  }

  // A green answer fades: the screen is ready for the next guest, the party and its undo stay
  // below in grey. A code still in front of the camera is not read again (the rules).
  function fade(last, code) {
    el.result.className = "gate-result idle faded";
    el.verdict.replaceChildren("Ready to scan");
    const still = code && rules.inView(code, clockNow()) ? " Its code is still in front of the camera: it is not read again." : "";
    el.detail.textContent = `Last: ${last}${still}`;
  }

  const who = (admission) => (admission.byName ? ` by ${admission.byName}` : "");
  const shortened = (code) => (code.length > 40 ? `${code.slice(0, 39)}…` : code);
  const guests = (n) => `${n} guest${n === 1 ? "" : "s"}`;
  // What a faded green says of its admission: `Katherine Johnson, 2 guests let through at 10:04.`
  // (`at`: when the server admitted them; offline, now).
  const letThrough = (party, n, at) => `${party.leadName || party.code}, ${guests(n)} let through at ${time(at || new Date().toISOString())}.`;
  const throughOf = (party) => ["Admitted", `${party.units.filter((u) => u.admitted).length} of ${party.units.length} in this party`];

  function line(tag, text, className) {
    const node = document.createElement(tag);
    node.textContent = text;
    if (className) {
      node.className = className;
    }
    return node;
  }

  function renderParty(party, { choose = false, undo = null, anyway = null, turn = null } = {}) {
    el.party.replaceChildren();
    el.party.hidden = !party;
    if (!party) {
      return;
    }
    const head = line("p", "", "gate-lead");
    head.append(line("strong", party.leadName || "No name"), ` · ${party.code}`);
    if (party.resellerReference) {
      head.append(line("span", ` · ${party.resellerReference}`, "muted"));
    }
    el.party.append(head);
    const units = document.createElement("ul");
    units.className = "gate-units";
    for (const unit of party.units) {
      const item = document.createElement("li");
      const label = document.createElement("label");
      if (choose) {
        const box = document.createElement("input");
        box.type = "checkbox";
        box.value = unit.uuid;
        box.checked = !unit.admitted;
        box.disabled = unit.admitted;
        label.append(box, " ");
      } else {
        label.append(line("span", unit.admitted ? "✓ " : "○ ", unit.admitted ? "in" : "out"));
      }
      label.append(line("strong", unit.unit), ` · ${unit.code}`);
      if (unit.admitted) {
        const when = unit.admission ? `in ${time(unit.admission.at)}${who(unit.admission)}` : unit.pending ? "in (offline, to sync)" : "in";
        label.append(line("span", ` ${when}`, "muted"));
      }
      item.append(label);
      for (const fact of unit.lines) {
        item.append(line("div", `${fact.label}: ${fact.text}`, "gate-line"));
      }
      units.append(item);
    }
    el.party.append(units);
    // Every capability's lines, as the server gives them: a capability added to the registry
    // shows here with no change to this page.
    const facts = party.lines.map((fact) => [fact.label, fact.text]);
    if (party.notes) {
      facts.push(["Notes", party.notes]);
    }
    if (facts.length) {
      const dl = document.createElement("dl");
      for (const [term, value] of facts) {
        dl.append(line("dt", term), line("dd", value));
      }
      el.party.append(dl);
    }
    if (choose) {
      const admit = line("button", "", "primary gate-big");
      admit.type = "button";
      const boxes = () => Array.from(units.querySelectorAll("input:checked:not(:disabled)"));
      const label = () => {
        const n = boxes().length;
        admit.textContent = n ? `Admit ${guests(n)}` : "Tick the guests to admit";
        admit.disabled = !n;
      };
      units.addEventListener("change", label);
      label();
      admit.addEventListener("click", () => admitChosen(party, boxes().map((b) => b.value), turn));
      el.party.append(admit);
    }
    if (anyway) {
      // Another day's ticket: staff may admit it all the same, which the server is told.
      const admit = line("button", "Admit anyway", "primary gate-big gate-anyway");
      admit.type = "button";
      admit.addEventListener("click", () => {
        admit.disabled = true;
        scanCode(rules.follow(turn), { ...anyway, nonce: nonce(), admitAnotherDay: true });
      });
      el.party.prepend(admit); // first: in reach however long the party
    }
    if (undo) {
      el.party.prepend(undoButton(party, undo)); // first: in reach however long the party
    }
  }

  // "Undo this admission" asks once, naming whom it takes back, then sends the undo once.
  function undoButton(party, undo) {
    const box = document.createElement("div");
    box.className = "gate-undo";
    const ask = line("button", "Undo this admission", "danger small");
    ask.type = "button";
    ask.addEventListener("click", () => {
      const sure = line("button", "Yes, undo", "danger small");
      sure.type = "button";
      const keep = line("button", "No, keep them in", "small");
      keep.type = "button";
      const question = line("p", `Undo admitting ${party.leadName || party.code}: ${undo.names.join(", ")}?`, "gate-ask");
      sure.addEventListener("click", () => {
        sure.disabled = true;
        keep.disabled = true;
        undoScan(party, undo.nonce);
      });
      keep.addEventListener("click", () => box.replaceChildren(ask));
      box.replaceChildren(question, sure, " ", keep);
    });
    box.append(ask);
    return box;
  }

  // --- scanning -------------------------------------------------------------------------------

  const queue = () => read(queueKey, []);

  // Tickets admitted offline and not yet synced stay admitted in the kept list.
  function applyQueue() {
    if (!list) {
      return;
    }
    for (const scan of queue()) {
      const party = list.parties.find((p) => p.bookingId === scan.bookingId);
      for (const unit of party ? party.units : []) {
        if (scan.units.includes(unit.uuid) && !unit.admitted) {
          unit.admitted = true;
          unit.pending = true;
        }
      }
    }
  }

  // The names of a party's tickets `uuids`: `Adult · P6EHKZWPBV`.
  const ticketNames = (party, uuids) => party.units.filter((u) => uuids.includes(u.uuid)).map((u) => `${u.unit} · ${u.code}`);

  // `2026-06-04` as a day: `Thu 4 Jun 2026`, as the page's heading writes it.
  const dayFormat = new Intl.DateTimeFormat("en-GB", { timeZone: "UTC", weekday: "short", day: "numeric", month: "short", year: "numeric" });
  const dayName = (isoDay) => {
    const parts = Object.fromEntries(dayFormat.formatToParts(new Date(`${isoDay}T12:00:00Z`)).map((p) => [p.type, p.value]));
    return `${parts.weekday} ${parts.day} ${parts.month} ${parts.year}`;
  };
  const whenOf = (departure) => (departure.localDateTimeStart ? `${dayName(departure.localDateTimeStart.slice(0, 10))} ${departure.localDateTimeStart.slice(11, 16)}` : "open date");

  function describe(answer) {
    const party = answer.booking;
    switch (answer.result) {
      case "ADMITTED": {
        const n = answer.admitted.length;
        return ["ok", throughOf(party), `${party.leadName || party.code}: let ${guests(n)} through.`];
      }
      case "VALID":
        return ["idle", "Valid ticket", "Your role may not admit: ask an operator."];
      case "ALREADY_ADMITTED": {
        const seen = answer.alreadyAdmitted || {};
        const where = seen.device ? ` on ${seen.device}` : "";
        return ["bad", "Already admitted", `At ${time(seen.at)}${who(seen)}${where}.`];
      }
      case "NOT_THIS_DEPARTURE":
        return ["warn", "Another departure", `Booked on ${party.departure.product} · ${party.departure.option}, ${whenOf(party.departure)}.`];
      case "ANOTHER_DAY":
        return ["warn", "Another day", `Booked for ${whenOf(party.departure)}, not today.${mayAdmit ? " Admit anyway only if that is right." : ""}`];
      case "UNDONE":
        // A scan sent again (an offline one synced late) whose admission was undone since.
        return ["warn", "Admission undone", "It was admitted, then undone: it no longer counts."];
      case "CANCELLED":
        return ["bad", "Cancelled", "This booking was cancelled: do not admit."];
      case "NOT_CONFIRMED":
        return ["bad", "Not confirmed", `The booking is ${party.status.replace("_", " ").toLowerCase()}: do not admit.`];
      default: {
        // Unknown, or a reseller reference that names several bookings (the message says so).
        const unknown = answer.message === `Unknown code: ${answer.code}`;
        return ["bad", `Unknown code: ${shortened(answer.code)}`, unknown ? "No booking or ticket has this code: check it with the guest." : answer.message];
      }
    }
  }

  // What a scan asked, for the "Admit anyway" of another day's ticket (a new nonce is made).
  const askedOf = (body) => {
    const { nonce: _, admitAnotherDay: __, ...asked } = body;
    return asked;
  };

  async function send(made, body) {
    const path = mayAdmit ? "/admin/checkin/scan" : "/admin/checkin/lookup";
    const { ok, answer: said } = await call("POST", path, body);
    if (!ok) {
      answer(made, "bad", "Not checked", said.errorMessage || "The server refused the scan.");
      return;
    }
    const [kind, verdict, detail] = describe(said);
    const admitted = said.result === "ADMITTED" && said.admitted.length;
    const undo = admitted ? { nonce: body.nonce, names: ticketNames(said.booking, said.admitted) } : null;
    const anyway = said.result === "ANOTHER_DAY" && mayAdmit ? askedOf(body) : null;
    const first = admitted ? said.booking.units.find((u) => u.uuid === said.admitted[0]) : null;
    const last = admitted ? letThrough(said.booking, said.admitted.length, first && first.admission && first.admission.at) : detail;
    answer(made, kind, verdict, detail, said.booking, { undo, anyway, code: body.code, last });
    remember(said.booking);
  }

  // Today at the departure's place: the phone's day, put right by what the server said when
  // the guest list was kept (a phone whose clock is wrong still knows the server's day).
  function today() {
    const shift = list && list.dayShift ? list.dayShift : 0;
    return new Date(Date.parse(phoneDay()) + shift * 86400000).toISOString().slice(0, 10);
  }

  // Offline: decide from the kept list and queue the admission with its nonce.
  function decideOffline(made, body) {
    const found = find(body.code);
    if (!found) {
      answer(made, "bad", `Unknown code: ${shortened(body.code)}`, "Not on this departure's guest list (offline: the server could not be asked).");
      return;
    }
    const { party, unit } = found;
    if (party.status === "CANCELLED") {
      answer(made, "bad", "Cancelled", "This booking was cancelled: do not admit.", party);
      return;
    }
    if (!travelling(party)) {
      answer(made, "bad", "Not confirmed", "The booking is not confirmed: do not admit.", party);
      return;
    }
    const asked = unit ? [unit] : party.units.filter((u) => !body.unitItemUuids || body.unitItemUuids.includes(u.uuid));
    const left = asked.filter((u) => !u.admitted);
    if (!left.length) {
      const seen = asked[0].admission;
      answer(made, "bad", "Already admitted", seen ? `At ${time(seen.at)}${who(seen)}.` : "Admitted on this device, offline.", party);
      return;
    }
    const start = party.departure.localDateTimeStart;
    if (start && start.slice(0, 10) !== today() && !body.admitAnotherDay) {
      const detail = `Booked for ${whenOf(party.departure)}, not today. Offline: admit anyway only if that is right; the server is told when the network is back.`;
      answer(made, "warn", "Another day", detail, party, { anyway: askedOf(body), code: body.code });
      return;
    }
    for (const u of left) {
      u.admitted = true;
      u.pending = true;
    }
    const pending = queue();
    pending.push({ ...body, bookingId: party.bookingId, units: left.map((u) => u.uuid), label: `${party.leadName || party.code}`, at: new Date().toISOString() });
    write(queueKey, pending);
    write(listKey, list);
    const detail = `Let ${guests(left.length)} through. Offline: kept on this device, sent when the network is back.`;
    answer(made, "ok", throughOf(party), detail, party, { code: body.code, last: letThrough(party, left.length) });
    renderCount();
    renderSync();
  }

  async function scanCode(made, body) {
    if (!mayAdmit) {
      try {
        await send(made, body);
      } catch (error) {
        answer(made, "bad", error instanceof SignedOut ? "Signed out" : "Offline", "Looking up needs the network.");
      }
      return;
    }
    try {
      await send(made, body);
      showNet("");
    } catch (error) {
      if (error instanceof SignedOut) {
        signedOut();
        return;
      }
      showNet("Offline: scanning from the guest list kept on this device.");
      decideOffline(made, body);
    }
  }

  // Check a code, for the turn `made` (typed, or read by the camera: the rules decided it may
  // be sent). A voucher of a party with several guests still to come asks who is here first.
  function check(raw, made) {
    const code = raw.trim();
    if (!code) {
      return;
    }
    const found = find(code);
    if (mayAdmit && found && !found.unit && travelling(found.party)) {
      const left = found.party.units.filter((u) => !u.admitted);
      if (left.length > 1) {
        answer(made, "idle", "Who is here?", `${left.length} guests still to come on this booking.`, found.party, { choose: true, quiet: true });
        return;
      }
    }
    scanCode(made, { code, nonce: nonce(), departure: gate, device });
  }

  // Staff typed a code, or picked a party from the list: it has the screen until its answer
  // was seen.
  function typed(raw) {
    if (raw.trim()) {
      check(raw, rules.typed(raw.trim(), clockNow()));
    }
  }

  function admitChosen(party, uuids, turn) {
    scanCode(rules.follow(turn), { code: party.code, nonce: nonce(), departure: gate, device, unitItemUuids: uuids });
  }

  async function undoScan(party, scanNonce) {
    try {
      const { ok, answer: said } = await call("POST", "/admin/checkin/undo", { nonce: scanNonce });
      if (ok) {
        const names = ticketNames(said.booking, said.undone);
        const detail = `${party.leadName || party.code}: ${names.join(", ")} no longer admitted.`;
        show("idle", "Admission undone", detail, said.booking, { quiet: true });
        remember(said.booking);
      } else {
        show("bad", "Not undone", said.errorMessage);
      }
    } catch {
      show("bad", "Not undone", "Undoing needs the network.");
    }
  }

  // --- the queue, sent when the network is back ---------------------------------------------------

  let syncing = false;
  async function sync() {
    if (syncing || !queue().length) {
      return;
    }
    syncing = true;
    try {
      while (queue().length) {
        const [scan] = queue();
        const body = { code: scan.code, nonce: scan.nonce, departure: scan.departure, device: scan.device };
        if (scan.unitItemUuids) {
          body.unitItemUuids = scan.unitItemUuids;
        }
        if (scan.admitAnotherDay) {
          body.admitAnotherDay = true; // staff admitted another day's ticket anyway, offline
        }
        let outcome;
        try {
          const { ok, answer } = await call("POST", "/admin/checkin/scan", body);
          const admittedAll = ok && answer.result === "ADMITTED" && scan.units.every((u) => answer.admitted.includes(u));
          outcome = {
            label: scan.label,
            code: scan.code,
            at: scan.at,
            nonce: scan.nonce,
            result: ok ? answer.result : answer.error,
            conflict: !admittedAll,
            message: ok ? (admittedAll ? "Admitted on the server" : describe(answer)[2]) : answer.errorMessage,
          };
          if (ok) {
            remember(answer.booking);
          }
        } catch (error) {
          if (error instanceof SignedOut) {
            signedOut();
          }
          break;
        }
        write(queueKey, queue().slice(1));
        write(logKey, [outcome, ...read(logKey, [])].slice(0, 50));
        renderSync();
      }
    } finally {
      syncing = false;
      renderSync();
      renderCount();
    }
  }

  function renderSync() {
    const pending = queue();
    const log = read(logKey, []);
    el.sync.hidden = !pending.length && !log.length;
    const items = pending.map((scan) => line("li", `${time(scan.at)} ${scan.label} · ${scan.code} — waiting to sync`, "pending"));
    for (const done of log) {
      const item = line("li", `${time(done.at)} ${done.label} · ${done.code} — ${done.conflict ? `CONFLICT: ${done.result}. ${done.message}` : "synced"}`);
      item.className = done.conflict ? "conflict" : "synced";
      items.push(item);
    }
    el.syncList.replaceChildren(...items);
  }

  // --- the camera -----------------------------------------------------------------------------
  // The page owns the stream and the frame loop; the decoder (ZXing-C++ as WebAssembly) reads
  // one frame at a time. A frame without a code, or one taken before the video has its size,
  // is a miss and the loop goes on; each frame is read at the video's own size, which a phone
  // camera may change after it starts.

  // `on` from the press of "Start camera" (the stream may still be coming) to "Stop camera".
  const camera = { on: false, stream: null, timer: 0, starts: 0, reader: null, canvas: document.createElement("canvas") };

  function stopCamera() {
    camera.on = false;
    camera.starts += 1; // a start still waiting for its stream gives it back when it comes
    clearTimeout(camera.timer);
    if (camera.stream) {
      camera.stream.getTracks().forEach((track) => track.stop());
      camera.stream = null;
    }
    el.video.srcObject = null;
    el.video.hidden = true;
    el.hint.hidden = true;
    el.camera.textContent = "Start camera";
  }

  async function frameCode() {
    const { video } = el;
    if (video.readyState < video.HAVE_CURRENT_DATA || !video.videoWidth || !video.videoHeight) {
      return null; // no picture yet
    }
    const { canvas } = camera;
    canvas.width = video.videoWidth;
    canvas.height = video.videoHeight;
    const paper = canvas.getContext("2d", { willReadFrequently: true });
    paper.drawImage(video, 0, 0, canvas.width, canvas.height);
    return camera.reader.read(paper.getImageData(0, 0, canvas.width, canvas.height));
  }

  async function readFrames(start) {
    let code = null;
    try {
      code = await frameCode();
    } catch (error) {
      // A frame without a code is not an error: the decoder itself failed (it did not load).
      if (start === camera.starts) {
        stopCamera();
        show("bad", "Camera unavailable", `The decoder could not start (${error.message || error}): type the codes.`);
      }
      return;
    }
    if (start !== camera.starts) {
      return; // stopped, or started again, while this frame was read
    }
    if (code) {
      const sight = rules.sighted(code, clockNow());
      const found = sight.send && choosing ? find(code) : null;
      // The voucher whose guests staff are ticking, shown again: their choices stay.
      const ticking = found && !found.unit && found.party.bookingId === choosing.bookingId;
      if (sight.send && !ticking) {
        check(code, sight.turn);
      }
    }
    showWaiting();
    camera.timer = setTimeout(() => readFrames(start), 150);
  }

  async function startCamera() {
    if (!window.ZXingGate || !navigator.mediaDevices || !navigator.mediaDevices.getUserMedia) {
      show("bad", "No camera", "This browser cannot use the camera here: type the codes.");
      return;
    }
    const start = ++camera.starts;
    camera.on = true;
    el.video.hidden = false;
    el.hint.hidden = false;
    el.camera.textContent = "Stop camera";
    let stream;
    try {
      stream = await navigator.mediaDevices.getUserMedia({ video: { facingMode: "environment" } });
    } catch (error) {
      if (start === camera.starts) {
        stopCamera();
        show("bad", "No camera", `The camera could not start (${error.name || error}): type the codes.`);
      }
      return;
    }
    if (start !== camera.starts) {
      stream.getTracks().forEach((track) => track.stop()); // stopped while it was starting
      return;
    }
    camera.reader = camera.reader || ZXingGate.gateReader(root.dataset.decoder);
    camera.stream = stream;
    el.video.srcObject = stream;
    el.video.play().catch(() => {}); // frames are read whether or not the preview plays
    readFrames(start);
  }

  // --- wiring ---------------------------------------------------------------------------------

  el.form.addEventListener("submit", (event) => {
    event.preventDefault();
    const code = el.code.value;
    el.code.value = "";
    typed(code);
  });
  el.camera.addEventListener("click", () => (camera.on ? stopCamera() : startCamera()));
  // A tap on the picture reads the code in front of the camera again, even the one just handled.
  el.video.addEventListener("click", () => {
    rules.readAgain();
    showWaiting();
  });
  el.count.addEventListener("click", () => {
    el.waiting.hidden = !el.waiting.hidden;
    el.count.setAttribute("aria-expanded", String(!el.waiting.hidden));
    if (!el.waiting.hidden) {
      el.waiting.scrollIntoView({ block: "nearest" });
    }
  });
  window.addEventListener("online", () => {
    showNet("");
    sync().then(loadList);
  });
  window.addEventListener("offline", () => showNet("Offline: scanning from the guest list kept on this device."));
  setInterval(() => {
    if (navigator.onLine) {
      sync();
    }
  }, 10000);
  setInterval(() => {
    if (navigator.onLine && !queue().length) {
      loadList();
    }
  }, 30000);
  if ("serviceWorker" in navigator) {
    // A page that did not come through the service worker (its first opening on this device)
    // is not kept yet: the worker is asked to keep it, so that it opens offline later.
    const kept = Boolean(navigator.serviceWorker.controller);
    navigator.serviceWorker.register("/admin/checkin/sw.js", { scope: "/admin/checkin" }).catch(() => {});
    if (!kept) {
      navigator.serviceWorker.ready.then((registration) => registration.active.postMessage({ keep: location.href })).catch(() => {});
    }
  }
  applyQueue();
  renderCount();
  renderSync();
  loadList().then(sync);
  root.dataset.ready = "yes";
})();
