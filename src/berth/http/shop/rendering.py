"""Rendering the shop's pages: its Jinja2 templates in the guest's language, and the headers of
every answer (a strict Content-Security-Policy: scripts only from Berth, and from Stripe.js's
origin on the payment page alone; framed only by BERTH_SHOP_ORIGINS). A page the browser loads
in a frame (the widget's overlay on a supplier's site) is its embedded version: no header nor
footer of its own, and the origins it may talk to (docs/widget.md)."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode, urlsplit

from fastapi import Request
from jinja2 import Environment, PackageLoader, StrictUndefined, select_autoescape
from starlette.responses import HTMLResponse, RedirectResponse, Response

from berth.domain.shop_access import embedding_origins, frame_ancestors
from berth.domain.shop_prices import Amount
from berth.http.context import octo_endpoint, services
from berth.http.shop.session import Guest, remember
from berth.http.static_files import PackageFiles
from berth.translations import LANGUAGES, Words, primary

FILES = PackageFiles("berth.http.shop", "/shop/static", "the shop's static files")
# Stripe.js from Stripe (what Stripe documents a page that loads it must allow); any other
# origin is a stand-in of it (localstripe in tests and the demo), allowed for all three.
STRIPE_SOURCES = {
    "script-src": ("https://js.stripe.com",),
    "frame-src": ("https://js.stripe.com", "https://hooks.stripe.com"),
    "connect-src": ("https://api.stripe.com",),
}
LANGUAGE_NAMES = {"en": "English", "de": "Deutsch"}


def origin_of(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}"


def content_security_policy(ancestors: str, stripe_js_url: str | None = None) -> str:
    """The policy of a shop page: everything from Berth only (images also from the https sites
    the catalogue's pictures are on), framed by `ancestors`; with `stripe_js_url`, the payment
    page's, also Stripe.js and what it talks to."""
    sources: dict[str, list[str]] = {
        "default-src": ["'none'"],
        "script-src": ["'self'"],
        "style-src": ["'self'"],
        "img-src": ["'self'", "https:", "data:"],
        "connect-src": ["'self'"],
        "frame-src": [],
        "form-action": ["'self'"],
        "base-uri": ["'none'"],
        "frame-ancestors": [ancestors],
    }
    if stripe_js_url is not None:
        origin = origin_of(stripe_js_url)
        for directive, stripe in STRIPE_SOURCES.items():
            sources[directive] += list(stripe) if origin == "https://js.stripe.com" else [origin]
    return "; ".join(f"{name} {' '.join(values)}" for name, values in sources.items() if values)


def headers(request: Request, stripe_js_url: str | None = None) -> dict[str, str]:
    ancestors = frame_ancestors(services(request).settings.shop_origins)
    return {
        "Cache-Control": "no-store",
        "Content-Security-Policy": content_security_policy(ancestors, stripe_js_url),
        "Referrer-Policy": "same-origin",
        "X-Content-Type-Options": "nosniff",
        "Vary": "Sec-Fetch-Dest",
    }


def embedded(request: Request) -> bool:
    """Whether the browser loads the page in a frame (it says so in Fetch Metadata)."""
    return request.headers.get("sec-fetch-dest") == "iframe"


def parent_origins(request: Request) -> str:
    """The origins an embedded page answers the widget's messages from: Berth's own and
    BERTH_SHOP_ORIGINS, as `frame-ancestors` allows them to frame it."""
    own = origin_of(octo_endpoint(request))
    return " ".join(dict.fromkeys([own, *embedding_origins(services(request).settings.shop_origins)]))


def shop_words(guest: Guest, languages: list[str]) -> Words:
    """Berth's words in the guest's language, in the region of the catalogue's content in it
    when it has some (English of a catalogue written in en-GB: `2 June`, not `June 2`)."""
    regional = next((tag for tag in languages if primary(tag) == guest.language), guest.language)
    return Words(regional)


def money(words: Words, amount: Amount | None) -> str:
    return words.money(amount.minor, amount.currency, amount.precision) if amount is not None else ""


def _with_language(request: Request, language: str) -> str:
    query = [(k, v) for k, v in request.query_params.multi_items() if k != "lang"] + [("lang", language)]
    return f"{request.url.path}?{urlencode(query)}"


templates = Environment(
    loader=PackageLoader("berth.http.shop", "templates"),
    autoescape=select_autoescape(default=True, default_for_string=True),
    undefined=StrictUndefined,
    trim_blocks=True,
    lstrip_blocks=True,
    auto_reload=False,  # the templates are the package's: no file to look at again on each page
)
templates.globals.update(static=FILES.url)


def _test_mode(request: Request) -> bool:
    """Whether the shop takes test cards only (a Stripe test key, or the fake Stripe): every
    page says so."""
    card = services(request).payments.provider
    return card is not None and card.test_mode


def page(
    request: Request,
    guest: Guest,
    template: str,
    *,
    status_code: int = 200,
    stripe_js_url: str | None = None,
    words: Words | None = None,
    **context: Any,
) -> HTMLResponse:
    """A shop page in the guest's language (`words`: as the catalogue writes it), with the
    shop's headers and the browser's cookies."""
    words = words or Words(guest.language)
    languages = [(code, LANGUAGE_NAMES.get(code, code), _with_language(request, code)) for code in LANGUAGES]
    embed = embedded(request)
    html = templates.get_template(template).render(
        request=request,
        guest=guest,
        t=words,
        money=lambda amount: money(words, amount),
        languages=languages,
        stripe_js_url=stripe_js_url,
        embed=embed,
        test_mode=_test_mode(request),
        parent_origins=parent_origins(request) if embed else "",
        supplier=context.pop("supplier", None),
        **context,
    )
    response = HTMLResponse(html, status_code=status_code, headers=headers(request, stripe_js_url))
    remember(response, guest)
    return response


def redirect(path: str, guest: Guest | None = None) -> Response:
    """See-other to `path` (the browser's cookies set, when it has new ones)."""
    response = RedirectResponse(path, status_code=303, headers={"Cache-Control": "no-store"})
    if guest is not None:
        remember(response, guest)
    return response
