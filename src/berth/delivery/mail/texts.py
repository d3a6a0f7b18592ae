"""The words of guests' emails, per language. A language missing here is written in English."""

from __future__ import annotations

from typing import Final

TEXTS: Final[dict[str, dict[str, str]]] = {
    "en": {
        "subject_receipt": "Your booking {reference}: {title}",
        "subject_cancelled": "Cancelled: booking {reference}, {title}",
        "subject_changed": "New time for booking {reference}: {title}",
        "greeting": "Hello {name},",
        "greeting_anonymous": "Hello,",
        "intro_receipt": "thank you for your booking. Here is your receipt.",
        "intro_pending": "thank you for your booking. The supplier has yet to confirm it; you will hear from them.",
        "intro_cancelled": "your booking has been cancelled.",
        "intro_changed": "the time of your booking has changed. The new time is below.",
        "why_reseller": "It was cancelled at the request of the agent you booked with.",
        "why_supplier": "It was cancelled by {supplier}.",
        "why_departure": "{supplier} cancelled the departure.",
        "reason": "Reason: {reason}",
        "refund": "You are refunded in full by the agent you booked with.",
        "reference": "Booking reference",
        "order_reference": "Order reference",
        "what": "What",
        "when": "When",
        "previously": "Previously",
        "where": "Where",
        "guests": "Guests",
        "lead": "Lead guest",
        "price": "Price",
        "tickets": "Tickets",
        "ticket": "Ticket",
        "voucher": "Voucher (PDF, every guest)",
        "ticket_of": "Ticket {n} of {of} (PDF)",
        "attached": "Your tickets are attached as a PDF and can be opened from these links:",
        "cancellation": "Cancellation",
        "free_until": "Free cancellation until {when}.",
        "not_cancellable": "This booking cannot be cancelled free of charge.",
        "contact": "Questions? Contact {supplier}",
        "email": "Email",
        "telephone": "Telephone",
        "website": "Website",
        "address": "Address",
        "all_day": "all day",
    },
    "de": {
        "subject_receipt": "Ihre Buchung {reference}: {title}",
        "subject_cancelled": "Storniert: Buchung {reference}, {title}",
        "subject_changed": "Neue Zeit für Buchung {reference}: {title}",
        "greeting": "Guten Tag {name},",
        "greeting_anonymous": "Guten Tag,",
        "intro_receipt": "vielen Dank für Ihre Buchung. Hier ist Ihre Buchungsbestätigung.",
        "intro_pending": "vielen Dank für Ihre Buchung. Der Anbieter muss sie noch bestätigen; Sie hören von ihm.",
        "intro_cancelled": "Ihre Buchung wurde storniert.",
        "intro_changed": "die Zeit Ihrer Buchung hat sich geändert. Die neue Zeit steht unten.",
        "why_reseller": "Sie wurde auf Wunsch des Vermittlers storniert, bei dem Sie gebucht haben.",
        "why_supplier": "Sie wurde von {supplier} storniert.",
        "why_departure": "{supplier} hat die Durchführung abgesagt.",
        "reason": "Grund: {reason}",
        "refund": "Sie erhalten den vollen Betrag über den Vermittler zurück, bei dem Sie gebucht haben.",
        "reference": "Buchungsnummer",
        "order_reference": "Auftragsnummer",
        "what": "Was",
        "when": "Wann",
        "previously": "Bisher",
        "where": "Wo",
        "guests": "Teilnehmer",
        "lead": "Hauptgast",
        "price": "Preis",
        "tickets": "Tickets",
        "ticket": "Ticket",
        "voucher": "Voucher (PDF, alle Teilnehmer)",
        "ticket_of": "Ticket {n} von {of} (PDF)",
        "attached": "Ihre Tickets hängen als PDF an und lassen sich über diese Links öffnen:",
        "cancellation": "Stornierung",
        "free_until": "Kostenlose Stornierung bis {when}.",
        "not_cancellable": "Diese Buchung kann nicht kostenlos storniert werden.",
        "contact": "Fragen? Kontakt: {supplier}",
        "email": "E-Mail",
        "telephone": "Telefon",
        "website": "Webseite",
        "address": "Adresse",
        "all_day": "ganztägig",
    },
}
DATE_FORMATS: Final[dict[str, tuple[str, str]]] = {  # date and time, date alone
    "en": ("%a %d %b %Y, %H:%M", "%a %d %b %Y"),
    "de": ("%d.%m.%Y, %H:%M Uhr", "%d.%m.%Y"),
}


def words(language: str) -> dict[str, str]:
    """The texts for a content language tag (`de-DE` reads German), English when missing."""
    return TEXTS.get(language.split("-")[0].lower(), TEXTS["en"])


def date_formats(language: str) -> tuple[str, str]:
    return DATE_FORMATS.get(language.split("-")[0].lower(), DATE_FORMATS["en"])
