// The shop's pages work without this script; with it, a party's or a duration's choice shows
// its prices at once (the form is sent as soon as it changes), and a catalogue picture that
// does not load leaves no empty frame.
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
