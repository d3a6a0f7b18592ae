// The shop's pages work without this script; with it, a party's or a duration's choice shows
// its prices at once (the form is sent as soon as it changes).
"use strict";

document.addEventListener("DOMContentLoaded", function () {
  document.querySelectorAll("[data-hidden-with-script]").forEach(function (element) {
    element.hidden = true;
  });
  document.querySelectorAll("[data-submit-on-change]").forEach(function (field) {
    field.addEventListener("change", function () {
      field.form.requestSubmit();
    });
  });
});
