// The shop's pages work without this script; with it, a party's or a duration's choice shows
// its prices at once (the form is sent as soon as it changes), a catalogue picture that does
// not load leaves no empty frame, and a page in the widget's overlay talks to the supplier's
// page around it.
"use strict";

function hideBroken(picture) {
  picture.hidden = true;
}

// Whether this browser keeps the shop's cookies here: one framed by a page of another site may
// not (Safari's default), and a booking needs its session.
function keepsCookies() {
  const scope = location.protocol === "https:" ? "; SameSite=None; Secure; Partitioned" : "; SameSite=Lax";
  document.cookie = "berth_shop_probe=1; path=/shop; max-age=60" + scope;
  return document.cookie.split("; ").includes("berth_shop_probe=1");
}

// In the widget's overlay (docs/widget.md): the supplier's page says hello after each page
// loads; the first hello from the parent window, from an origin this page may be embedded by,
// says where to send the page's height and the guest's wish to close (Escape, a close button),
// or that the booking cannot be made in the frame. Nothing is sent before it, nor anywhere else.
function talkToOverlay(root) {
  const allowed = root.dataset.parentOrigins.split(" ");
  let parentOrigin = null;

  function tell(message) {
    if (parentOrigin !== null) {
      window.parent.postMessage(message, parentOrigin);
    }
  }

  function tellHeight() {
    tell({ berth: "height", height: Math.ceil(root.getBoundingClientRect().height) });
  }

  window.addEventListener("message", function (event) {
    const hello = event.data && event.data.berth === "hello";
    if (!hello || event.source !== window.parent || !allowed.includes(event.origin)) {
      return;
    }
    parentOrigin = event.origin;
    if (!keepsCookies()) {
      tell({ berth: "no-cookies" });
      return;
    }
    document.querySelectorAll("[data-in-overlay]").forEach(function (element) {
      element.hidden = false;
    });
    tellHeight();
  });
  new ResizeObserver(tellHeight).observe(root);
  document.addEventListener("keydown", function (event) {
    if (event.key === "Escape" && !event.defaultPrevented) {
      tell({ berth: "close" });
    }
  });
  document.querySelectorAll("[data-close-overlay]").forEach(function (button) {
    button.addEventListener("click", function () {
      tell({ berth: "close" });
    });
  });
}

document.addEventListener("DOMContentLoaded", function () {
  document.querySelectorAll("img.picture").forEach(function (picture) {
    if (picture.complete && picture.naturalWidth === 0) {
      hideBroken(picture);
    }
    picture.addEventListener("error", function () {
      hideBroken(picture);
    });
  });
  document.querySelectorAll("[data-hidden-with-script]").forEach(function (element) {
    element.hidden = true;
  });
  document.querySelectorAll("[data-submit-on-change]").forEach(function (field) {
    field.addEventListener("change", function () {
      field.form.requestSubmit();
    });
  });
  const root = document.documentElement;
  if (root.dataset.parentOrigins && window.parent !== window) {
    talkToOverlay(root);
  }
});
