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

// The mapping form: the option list shows only the chosen product's options, the unit list only
// the chosen option's (or product's) units. Without this script every choice shows, grouped,
// and the server refuses a mismatch.
for (const narrowed of document.querySelectorAll("select[data-narrowed-by]")) {
  const parent = document.getElementById(narrowed.dataset.narrowedBy);
  if (!parent) {
    continue;
  }
  const groups = Array.from(narrowed.querySelectorAll("optgroup"));
  const narrow = () => {
    const kept = narrowed.value;
    for (const group of groups) {
      group.remove();
    }
    const matching = groups.filter((group) => group.dataset.parent === parent.value);
    for (const group of matching) {
      narrowed.append(group);
    }
    const values = Array.from(narrowed.options, (option) => option.value).filter((value) => value);
    narrowed.value = values.includes(kept) ? kept : values.length === 1 ? values[0] : "";
    narrowed.disabled = values.length === 0;
    narrowed.dispatchEvent(new Event("change", { bubbles: true }));
  };
  parent.addEventListener("change", narrow);
  narrow();
}

// A form marked data-warn-unsaved asks before the page is left with changes not saved: typed
// since the page opened, or already there when the page came back with them ("typed": a
// preview or a refusal shows the form as typed, not as stored). Submitting it does not ask.
for (const form of document.querySelectorAll("form[data-warn-unsaved]")) {
  let unsaved = form.dataset.warnUnsaved === "typed";
  let leaving = false;
  const changed = () => {
    unsaved = true;
  };
  form.addEventListener("input", changed);
  form.addEventListener("change", changed);
  form.addEventListener("submit", () => {
    leaving = true;
  });
  window.addEventListener("beforeunload", (event) => {
    if (unsaved && !leaving) {
      event.preventDefault();
      event.returnValue = "";
    }
  });
}

// Ctrl+S (Cmd+S on a Mac) presses the page's button marked data-shortcut="s".
document.addEventListener("keydown", (event) => {
  if ((event.ctrlKey || event.metaKey) && event.key.toLowerCase() === "s") {
    const button = document.querySelector('button[data-shortcut="s"]');
    if (button && button.form) {
      event.preventDefault();
      button.form.requestSubmit(button);
    }
  }
});
