// The shop's pages work without this script; with it, a party's or a duration's choice shows
// its prices at once (the form is sent as soon as it changes), a catalogue picture that does
// not load leaves no empty frame, and a page shown in a frame (the widget on the supplier's
// site) tells the page around it its height: {type: "berth-shop:height", height, path}.
"use strict";

function hideBroken(picture) {
  picture.hidden = true;
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
});

if (window.parent !== window) {
  const tellHeight = function () {
    const height = Math.ceil(document.documentElement.scrollHeight);
    // Only a height and the page's path: nothing a page around it may not know.
    window.parent.postMessage({ type: "berth-shop:height", height, path: window.location.pathname }, "*");
  };
  window.addEventListener("load", tellHeight);
  if (typeof ResizeObserver === "function") {
    new ResizeObserver(tellHeight).observe(document.documentElement);
  }
}
