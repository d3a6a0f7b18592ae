// The gate scanner's service worker (served at /admin/checkin/sw.js, after the line that
// sets SHELL to the files the scanner page loads). The scanner's pages come from the network
// when it answers and from the copy kept here when it does not; the files, whose URLs carry
// their digests, from the copy first. A page opened before the worker ran (its first opening
// on the device) asks to be kept, and is fetched and kept at once.
"use strict";

const CACHE = "berth-gate-v1";

self.addEventListener("install", (event) => {
  event.waitUntil(
    caches
      .open(CACHE)
      .then((cache) => cache.addAll(SHELL))
      .then(() => self.skipWaiting()),
  );
});

self.addEventListener("activate", (event) => {
  event.waitUntil(
    caches
      .keys()
      .then((names) => Promise.all(names.filter((n) => n !== CACHE).map((n) => caches.delete(n))))
      .then(() => self.clients.claim()),
  );
});

function isScannerPage(url) {
  return url.origin === self.location.origin && url.pathname.startsWith("/admin/checkin");
}

function keep(request, response) {
  if (response.ok && !response.redirected && response.type === "basic") {
    const copy = response.clone();
    caches.open(CACHE).then((cache) => cache.put(request, copy));
  }
  return response;
}

self.addEventListener("fetch", (event) => {
  const request = event.request;
  if (request.method !== "GET") {
    return;
  }
  const url = new URL(request.url);
  if (url.origin !== self.location.origin) {
    return;
  }
  if (request.mode === "navigate" && isScannerPage(url)) {
    event.respondWith(
      fetch(request)
        .then((response) => keep(request, response))
        .catch(() =>
          caches.match(request).then(
            (kept) =>
              kept ||
              new Response("Offline: this page was not opened on this device while online.", {
                status: 503,
                headers: { "Content-Type": "text/plain; charset=utf-8" },
              }),
          ),
        ),
    );
  } else if (url.pathname.startsWith("/admin/static/")) {
    event.respondWith(
      caches.match(request).then((kept) => kept || fetch(request).then((response) => keep(request, response))),
    );
  }
});

self.addEventListener("message", (event) => {
  const url = event.data && event.data.keep ? new URL(event.data.keep) : null;
  if (url && isScannerPage(url)) {
    const request = new Request(url.href, { credentials: "same-origin" });
    event.waitUntil(fetch(request).then((response) => keep(request, response)).catch(() => {}));
  }
});
