"""The PDF of a booking's tickets (reportlab): one page per ticket, A4 or Letter. Text is set in
paragraphs that wrap, from escaped and shortened strings, so that no name or content can break
the page; the code is drawn as every barcode the product names, as vector shapes."""

from __future__ import annotations

import io
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Literal
from xml.sax.saxutils import escape

import reportlab
from reportlab.lib.colors import HexColor, black, white
from reportlab.lib.pagesizes import A4, LETTER
from reportlab.lib.styles import ParagraphStyle
from reportlab.lib.units import mm
from reportlab.pdfbase import pdfmetrics
from reportlab.pdfbase.ttfonts import TTFont
from reportlab.pdfgen.canvas import Canvas
from reportlab.platypus import Flowable, Frame, KeepInFrame, Paragraph, Spacer

from berth.domain.catalog import DeliveryFormat
from berth.tickets.barcodes import Matrix, aztec_matrix, code128_bars, qr_matrix
from berth.tickets.sheet import TicketPage

Paper = Literal["A4", "LETTER"]
PAPER_SIZES = {"A4": A4, "LETTER": LETTER}

# Bitstream Vera, shipped inside reportlab: embedded (subset), so that the ticket prints the
# same everywhere and text beyond Latin-1 is drawn rather than lost.
_FONTS = Path(reportlab.__file__).parent / "fonts"
pdfmetrics.registerFont(TTFont("BerthSans", str(_FONTS / "Vera.ttf")))
pdfmetrics.registerFont(TTFont("BerthSans-Bold", str(_FONTS / "VeraBd.ttf")))
REGULAR, BOLD = "BerthSans", "BerthSans-Bold"

INK = HexColor("#1b2a3a")
MUTED = HexColor("#5b6b7b")
BAND = HexColor("#1b4f72")

MARGIN = 15 * mm
FOOTER_SIZE = 8
CODES_WIDTH = 62 * mm
GAP = 8 * mm

# Longest text kept of one value: a 10,000-character name is cut, not set.
MAX_TEXT = 300
MAX_TITLE = 120
_CONTROL = re.compile(r"[\x00-\x1f\x7f]+")


def clean(text: str, limit: int = MAX_TEXT) -> str:
    """Text safe to set: control characters (newlines included) become spaces, and it is cut
    at `limit` characters."""
    flat = _CONTROL.sub(" ", text).strip()
    return flat if len(flat) <= limit else flat[: limit - 1].rstrip() + "…"


def _markup(text: str, limit: int = MAX_TEXT) -> str:
    """Paragraph markup of plain text: nothing in it is read as a tag or an entity."""
    return escape(clean(text, limit))


_STYLES = {
    "title": ParagraphStyle("title", fontName=BOLD, fontSize=19, leading=23, textColor=INK, spaceAfter=2),
    "option": ParagraphStyle("option", fontName=REGULAR, fontSize=13, leading=16, textColor=INK),
    "when": ParagraphStyle(
        "when", fontName=BOLD, fontSize=13, leading=16, textColor=INK, spaceBefore=8, spaceAfter=8
    ),
    "line": ParagraphStyle("line", fontName=REGULAR, fontSize=10, leading=13, textColor=INK, spaceAfter=4),
    "heading": ParagraphStyle(
        "heading", fontName=BOLD, fontSize=11, leading=14, textColor=INK, spaceBefore=8, spaceAfter=3
    ),
    "bullet": ParagraphStyle(
        "bullet", fontName=REGULAR, fontSize=10, leading=13, textColor=INK, leftIndent=10, bulletIndent=0
    ),
}


def _text_flow(page: TicketPage) -> list[Flowable]:
    flow: list[Flowable] = [Paragraph(_markup(page.product, MAX_TITLE), _STYLES["title"])]
    if page.option:
        flow.append(Paragraph(_markup(page.option, MAX_TITLE), _STYLES["option"]))
    if page.when:
        flow.append(Paragraph(_markup(page.when), _STYLES["when"]))
    for line in page.lines:
        flow.append(
            Paragraph(
                f"<font name='{BOLD}'>{_markup(line.label, 60)}:</font> {_markup(line.text)}", _STYLES["line"]
            )
        )
    if page.instructions:
        flow.append(Paragraph(_markup(page.words("How to redeem")), _STYLES["heading"]))
        for instruction in page.instructions:
            flow.append(Paragraph(_markup(instruction), _STYLES["bullet"], bulletText="•"))
    return flow


def _draw_matrix(canvas: Canvas, matrix: Matrix, x: float, y: float, size: float) -> None:
    """A 2D symbol `size` wide with its lower left corner at (x, y); runs of dark modules in a
    row are drawn as one rectangle."""
    module = size / len(matrix)
    path = canvas.beginPath()
    for row_index, row in enumerate(matrix):
        top = y + size - (row_index + 1) * module
        start = None
        for col, dark in enumerate([*row, 0]):
            if dark and start is None:
                start = col
            elif not dark and start is not None:
                path.rect(x + start * module, top, (col - start) * module, module)
                start = None
    canvas.drawPath(path, stroke=0, fill=1)


def _draw_bars(canvas: Canvas, bars: str, x: float, y: float, width: float, height: float) -> None:
    module = width / len(bars)
    path = canvas.beginPath()
    for match in re.finditer("1+", bars):
        path.rect(x + match.start() * module, y, (match.end() - match.start()) * module, height)
    canvas.drawPath(path, stroke=0, fill=1)


def _draw_codes(canvas: Canvas, page: TicketPage, right: float, top: float) -> float:
    """The barcodes in a column whose right edge is `right`, from `top` down; the y reached."""
    left = right - CODES_WIDTH
    y = top
    canvas.setFillColor(black)
    for delivery_format in page.formats:
        if delivery_format is DeliveryFormat.QRCODE:
            matrix = qr_matrix(page.code)
            size = 44 * mm
            y -= size + 4 * mm  # the quiet zone, four modules and more, stays white
            _draw_matrix(canvas, matrix, left + (CODES_WIDTH - size) / 2, y, size)
        elif delivery_format is DeliveryFormat.AZTECCODE:
            matrix = aztec_matrix(page.code)
            size = 34 * mm
            y -= size + 6 * mm
            _draw_matrix(canvas, matrix, left + (CODES_WIDTH - size) / 2, y, size)
        else:
            bars = code128_bars(page.code)
            width = min(CODES_WIDTH - 4 * mm, len(bars) * 0.5 * mm)
            height = 16 * mm
            y -= height + 8 * mm
            _draw_bars(canvas, bars, left + (CODES_WIDTH - width) / 2, y, width, height)
    canvas.setFont(BOLD, 12)
    canvas.setFillColor(INK)
    for index, line in enumerate(_code_lines(clean(page.code, 40), CODES_WIDTH)):
        y -= (5 if index else 7) * mm
        canvas.drawCentredString(left + CODES_WIDTH / 2, y, line)
    return y


def _code_lines(code: str, width: float) -> list[str]:
    """The code as printed under its barcodes: one line, or, wider than the column (a gift
    voucher's seven groups), broken after its dashes into lines that fit."""
    lines: list[str] = []
    for group in code.split("-"):
        joined = f"{lines[-1]}-{group}" if lines else group
        if lines and pdfmetrics.stringWidth(joined, BOLD, 12) <= width:
            lines[-1] = joined
        elif lines:
            lines[-1] += "-"
            lines.append(group)
        else:
            lines.append(group)
    return lines


def _fitted(text: str, font: str, size: float, width: float) -> str:
    """`text` cut (with …) to be at most `width` wide in that font."""
    while text and pdfmetrics.stringWidth(text, font, size) > width:
        text = text[:-2] + "…" if len(text) > 1 else ""
    return text


def _draw_footer(canvas: Canvas, page: TicketPage, width: float) -> None:
    """Under a rule: what to do with the page, on the right, and the supplier's contact on the
    left of it when both fit on the line, else on a line of its own below (a German instruction
    and a long contact never overlap)."""
    canvas.setStrokeColor(MUTED)
    canvas.line(MARGIN, MARGIN + 8 * mm, width - MARGIN, MARGIN + 8 * mm)
    canvas.setFillColor(MUTED)
    canvas.setFont(REGULAR, FOOTER_SIZE)
    usable = width - 2 * MARGIN
    show = _fitted(page.words("Show this page, printed or on screen"), REGULAR, FOOTER_SIZE, usable)
    canvas.drawRightString(width - MARGIN, MARGIN + 3 * mm, show)
    if not page.supplier_contact:
        return
    contact = clean(page.supplier_contact, 140)
    beside = usable - pdfmetrics.stringWidth(show, REGULAR, FOOTER_SIZE) - GAP
    if pdfmetrics.stringWidth(contact, REGULAR, FOOTER_SIZE) <= beside:
        canvas.drawString(MARGIN, MARGIN + 3 * mm, contact)
    else:
        below = MARGIN + 3 * mm - FOOTER_SIZE * 1.4
        canvas.drawString(MARGIN, below, _fitted(contact, REGULAR, FOOTER_SIZE, usable))


def _draw_page(canvas: Canvas, page: TicketPage, width: float, height: float) -> None:
    band = 16 * mm
    canvas.setFillColor(BAND)
    canvas.rect(0, height - band, width, band, stroke=0, fill=1)
    canvas.setFillColor(white)
    canvas.setFont(BOLD, 13)
    heading_width = canvas.stringWidth(page.heading, BOLD, 13)
    supplier = _fitted(clean(page.supplier, 80), BOLD, 13, width - 2 * MARGIN - heading_width - GAP)
    canvas.drawString(MARGIN, height - band + 6 * mm, supplier)
    canvas.drawRightString(width - MARGIN, height - band + 6 * mm, page.heading)
    top = height - band - 8 * mm
    _draw_codes(canvas, page, width - MARGIN, top)
    text_width = width - 2 * MARGIN - CODES_WIDTH - GAP
    bottom = MARGIN + 12 * mm
    frame = Frame(MARGIN, bottom, text_width, top - bottom, 0, 0, 0, 0, showBoundary=0)
    frame.addFromList(
        [KeepInFrame(text_width, top - bottom, [*_text_flow(page), Spacer(1, 1)], mode="truncate")], canvas
    )
    _draw_footer(canvas, page, width)


def render_pdf(pages: Sequence[TicketPage], paper: Paper = "A4", title: str = "Tickets") -> bytes:
    """The PDF of `pages`, one page each."""
    width, height = PAPER_SIZES[paper]
    out = io.BytesIO()
    canvas = Canvas(out, pagesize=(width, height), invariant=True, pageCompression=1)
    canvas.setTitle(clean(title, 120))
    canvas.setCreator("Berth")
    for page in pages:
        _draw_page(canvas, page, width, height)
        canvas.showPage()
    canvas.save()
    return out.getvalue()
