// The shop's payment page: Stripe's card element (from Stripe.js, which the page loads from
// Stripe), the card given to Stripe for this booking's payment, then Berth asked to charge it.
// Berth reads the outcome from Stripe itself; this script only shows it and moves on. 3-D
// Secure is Stripe.js's own step. Nothing here knows the amount: the booking's is charged.
"use strict";

(function () {
  const form = document.getElementById("pay");
  if (!form || typeof window.Stripe !== "function") {
    return;
  }
  const data = form.dataset;
  const stripe = window.Stripe(data.key, { locale: data.locale });
  const card = stripe.elements({ locale: data.locale }).create("card", { hidePostalCode: true });
  card.mount("#card");
  const button = document.getElementById("pay-button");
  const problem = document.getElementById("pay-problem");
  const label = button.textContent;
  let setup = data.setup;

  function busy(on) {
    button.disabled = on;
    button.textContent = on ? data.busy : label;
    form.setAttribute("aria-busy", on ? "true" : "false");
  }

  function say(text) {
    problem.textContent = "";
    const line = document.createElement("p");
    line.textContent = text;
    problem.appendChild(line);
    problem.hidden = false;
    problem.focus();
  }

  async function post(step) {
    const body = new URLSearchParams({ csrf: form.elements.csrf.value });
    const response = await fetch(data.base + "/" + step, {
      method: "POST",
      body,
      credentials: "same-origin",
      headers: { Accept: "application/json" },
    });
    const type = response.headers.get("content-type") || "";
    if (!type.startsWith("application/json")) {
      return { problem: data.failed };
    }
    return response.json();
  }

  async function freshCard() {
    const answer = await post("card");
    if (answer.setup) {
      setup = answer.setup;
    }
  }

  async function follow(answer) {
    if (answer.action) {
      await stripe.confirmCardPayment(answer.action);
      return follow(await post("settle"));
    }
    if (answer.next) {
      window.location.assign(answer.next);
      return true;
    }
    say(answer.problem || data.failed);
    await freshCard();
    return false;
  }

  async function pay() {
    const given = await stripe.confirmCardSetup(setup, {
      payment_method: { card, billing_details: { name: data.name, email: data.email } },
    });
    if (given.error) {
      say(given.error.message || data.failed);
      await freshCard();
      return false;
    }
    return follow(await post("charge"));
  }

  form.addEventListener("submit", async function (event) {
    event.preventDefault();
    problem.hidden = true;
    busy(true);
    let leaving = false;
    try {
      leaving = await pay();
    } catch (error) {
      say(data.failed);
    }
    if (!leaving) {
      busy(false);
    }
  });
})();
