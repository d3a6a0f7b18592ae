// Berth's booking widget, version 1 (docs/widget.md), for a supplier's own website: loaded
// from Berth with one <script> tag, it makes each element with `data-berth-product` (a link
// or a button) open the shop's booking pages in an overlay on the page. Without it, such a
// link is a plain link to the same booking page.
//
// The overlay is a modal <dialog> in a shadow root (the page's styles cannot reach it, the
// page behind it is inert so focus stays in it, Escape closes it) holding a frame of the
// shop; the page behind does not scroll while it is open; it fills the screen of a phone.
// Messages: after each page loads in the frame, this script says hello to Berth's origin
// only; the frame's page answers (when BERTH_SHOP_ORIGINS lists this site) with its height
// and the guest's wish to close, or that the browser keeps no cookies for a frame of Berth on
// this site (then the booking page opens in the tab itself). Only messages from that frame and
// Berth's origin are read.
"use strict";

(function () {
  const script = document.currentScript;
  if (!script || window.berthWidget) {
    return;
  }
  window.berthWidget = 1;
  const berth = new URL(script.src).origin;
  const TRIGGER = "[data-berth-product]";
  const CLOSE = { en: "Close", de: "Schließen" };
  const STYLE = `
    dialog[open] { display: flex; }
    dialog { box-sizing: border-box; flex-direction: column; padding: 0; border: 0;
      width: min(42rem, calc(100vw - 2rem)); max-width: none; max-height: calc(100vh - 2rem);
      max-height: calc(100dvh - 2rem); border-radius: 12px; overflow: hidden; background: #f3f5f8;
      box-shadow: 0 12px 48px rgba(0, 0, 0, 0.35); }
    dialog::backdrop { background: rgba(15, 20, 30, 0.65); }
    .bar { display: flex; justify-content: flex-end; background: #fff; border-bottom: 1px solid #d5dae1; }
    .close { font: 400 1.75rem/1 system-ui, sans-serif; min-width: 3rem; min-height: 3rem; margin: 0;
      border: 0; border-radius: 8px; background: transparent; color: #1b2330; cursor: pointer; }
    .close:hover { background: #e6e9ee; }
    .close:focus-visible { outline: 3px solid #0b5566; outline-offset: -3px; }
    iframe { display: block; flex: none; width: 100%; border: 0; height: var(--berth-height, 36rem);
      max-height: calc(100vh - 5rem); max-height: calc(100dvh - 5rem); background: #f3f5f8; }
    @media (max-width: 40rem) {
      dialog { width: 100vw; height: 100vh; height: 100dvh; max-height: none; margin: 0; border-radius: 0; }
      iframe { flex: 1; height: auto; max-height: none; }
    }`;
  let open = null;

  function shopUrl(trigger) {
    const data = trigger.dataset;
    let path = "/shop";
    if (data.berthProduct) {
      path += "/" + encodeURIComponent(data.berthProduct);
      if (/^\d{4}-\d{2}-\d{2}$/.test(data.berthDate || "")) {
        path += "/" + data.berthDate;
      }
    }
    const url = new URL(path, berth);
    if (data.berthOption) {
      url.searchParams.set("option", data.berthOption);
    }
    if (data.berthLanguage) {
      url.searchParams.set("lang", data.berthLanguage);
    }
    return url.href;
  }

  function language(trigger) {
    const tag = trigger.dataset.berthLanguage || document.documentElement.lang || "en";
    return CLOSE[tag.split("-")[0].toLowerCase()] ? tag.split("-")[0].toLowerCase() : "en";
  }

  function style(root) {
    if (root.adoptedStyleSheets !== undefined && window.CSSStyleSheet && CSSStyleSheet.prototype.replaceSync) {
      const sheet = new CSSStyleSheet(); // not a <style> element: a page's CSP allows it
      sheet.replaceSync(STYLE);
      root.adoptedStyleSheets = [sheet];
    } else {
      const element = document.createElement("style");
      element.textContent = STYLE;
      root.appendChild(element);
    }
  }

  function shut() {
    if (open === null) {
      return;
    }
    const { host, dialog, trigger, overflow } = open;
    open = null;
    dialog.close();
    host.remove();
    document.documentElement.style.overflow = overflow;
    trigger.focus();
  }

  function show(trigger) {
    shut();
    const title = trigger.textContent.trim() || trigger.getAttribute("aria-label") || "Booking";
    const host = document.createElement("div");
    host.setAttribute("data-berth-overlay", "");
    const root = host.attachShadow({ mode: "open" });
    style(root);
    const dialog = document.createElement("dialog");
    dialog.setAttribute("aria-label", title);
    const bar = document.createElement("div");
    bar.className = "bar";
    const close = document.createElement("button");
    close.type = "button";
    close.className = "close";
    close.textContent = "×";
    close.setAttribute("aria-label", CLOSE[language(trigger)]);
    close.addEventListener("click", shut);
    bar.appendChild(close);
    const frame = document.createElement("iframe");
    frame.title = title;
    frame.src = shopUrl(trigger);
    frame.addEventListener("load", function () {
      frame.contentWindow.postMessage({ berth: "hello" }, berth);
    });
    dialog.append(bar, frame);
    dialog.addEventListener("cancel", function (event) {
      event.preventDefault();
      shut();
    });
    root.appendChild(dialog);
    document.body.appendChild(host);
    open = { host, dialog, frame, trigger, overflow: document.documentElement.style.overflow };
    document.documentElement.style.overflow = "hidden";
    dialog.showModal();
  }

  window.addEventListener("message", function (event) {
    if (open === null || event.origin !== berth || event.source !== open.frame.contentWindow) {
      return;
    }
    const message = event.data || {};
    if (message.berth === "height" && Number.isFinite(message.height) && message.height > 0) {
      open.frame.style.setProperty("--berth-height", Math.ceil(message.height) + "px");
    } else if (message.berth === "close") {
      shut();
    } else if (message.berth === "no-cookies") {
      const url = shopUrl(open.trigger); // the booking page itself, in this tab
      shut();
      window.location.assign(url);
    }
  });

  document.addEventListener("click", function (event) {
    const trigger = event.target instanceof Element ? event.target.closest(TRIGGER) : null;
    const modified = event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey;
    if (trigger === null || modified || event.defaultPrevented) {
      return; // a link opened in a new tab or window goes to the booking page itself
    }
    event.preventDefault();
    show(trigger);
  });

  function prepare() {
    document.querySelectorAll(TRIGGER).forEach(function (trigger) {
      if (trigger.tagName === "A" && !trigger.hasAttribute("href")) {
        trigger.href = shopUrl(trigger);
      }
      trigger.setAttribute("aria-haspopup", "dialog");
    });
  }

  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", prepare);
  } else {
    prepare();
  }
})();
