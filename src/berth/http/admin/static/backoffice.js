// Berth back office: the few behaviours plain HTML lacks. Every page works without it.
"use strict";

document.addEventListener("submit", (event) => {
  const form = event.target;
  const question = form instanceof HTMLFormElement ? form.dataset.confirm : undefined;
  if (question && !window.confirm(question)) {
    event.preventDefault();
  }
});

document.addEventListener("click", (event) => {
  const button = event.target instanceof Element ? event.target.closest("button") : null;
  if (!button) {
    return;
  }
  if (button.dataset.copy) {
    const source = document.getElementById(button.dataset.copy);
    if (source && navigator.clipboard) {
      navigator.clipboard.writeText(source.textContent.trim()).then(() => {
        button.textContent = "Copied";
      });
    }
  } else if (button.hasAttribute("data-print")) {
    window.print();
  }
});
