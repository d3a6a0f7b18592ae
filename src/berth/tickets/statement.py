"""The PDF of a connection's monthly statement (reportlab), in the tickets' house style: their
fonts, colours and band, landscape so that a line fits on one row. The supplier's name and
address head it, then the reseller, the period, when it was made, the payment terms and who owes
whom, the lines (a table repeated under the band on every page: what each includes, its retail
before and after the discount of its offer, its tax and the rate applied) and the totals per
currency. Every page's foot names the reseller and says
"Page N of M"."""

from __future__ import annotations

import io
from datetime import UTC
from typing import IO, Any
from xml.sax.saxutils import escape

from reportlab.lib.colors import HexColor, white
from reportlab.lib.pagesizes import landscape
from reportlab.lib.styles import ParagraphStyle
from reportlab.lib.units import mm
from reportlab.lib.utils import simpleSplit
from reportlab.pdfbase.pdfmetrics import stringWidth
from reportlab.pdfgen.canvas import Canvas
from reportlab.platypus import Flowable, Paragraph, SimpleDocTemplate, Spacer, Table, TableStyle

from berth.domain.catalog import Supplier
from berth.domain.statements import Statement, StatementKind, StatementLine, Total, amount_text
from berth.tickets.pdf import BAND, BOLD, INK, MARGIN, MUTED, PAPER_SIZES, REGULAR, Paper, clean

RULE = HexColor("#d5dde5")
BAND_HEIGHT = 16 * mm
_TITLE = ParagraphStyle("title", fontName=BOLD, fontSize=17, leading=21, textColor=INK, spaceAfter=2)
_LINE = ParagraphStyle("line", fontName=REGULAR, fontSize=10, leading=13, textColor=INK)
_HEADING = ParagraphStyle(
    "heading", fontName=BOLD, fontSize=11, leading=14, textColor=INK, spaceBefore=10, spaceAfter=4
)
FIRST_AMOUNT = 6  # the columns from Retail on are amounts, right-aligned


def columns(statement: Statement) -> tuple[str, ...]:
    """The table's columns; Original - Discount = Retail (before and after the booking's offer);
    under the commission (or margin), its rate: as a percentage of retail; Paid by gift voucher:
    what the supplier holds already of the booking's price."""
    margin = statement.margin_label
    return (
        "Reference", "Travel", "Product · option", "Units · includes", "Status", "Currency",
        "Original", "Discount", "Retail", "Tax in retail", "Net", "Tax in net", f"{margin} · rate",
        "Paid by gift voucher",
    )  # fmt: skip


# The columns' widths in points, the same on A4 and Letter: a date, a status word, a column's
# name and an amount up to 10000.00 fit on a line. Product · option and Units · includes (None)
# share what the others leave, 55 to 45. The rate sits under the commission (its own column
# would leave Product · option too narrow on Letter beside Paid by gift voucher).
WIDTHS = (58, 53, None, None, 55, 47, 46, 46, 46, 42, 46, 42, 61, 46)
SHARES = (55, 45)
FRAME_PADDING = 6  # points, each side: reportlab's default
CELL_PADDING = 3  # points, left and right: half reportlab's default, for fourteen columns
FONT_SIZE = 8
CHUNK_ROWS = 100


def _cell(text: str, width: float, font: str = REGULAR) -> str:
    """`text` as lines that fit `width` at the lines' size, broken at spaces and inside a word
    longer than a line: a table sets a cell's lines as they are. (Plain lines rather than a
    Paragraph per cell: a Paragraph costs several times as much to make, measure and draw.)"""
    lines = []
    for line in simpleSplit(clean(text, 200), font, FONT_SIZE, width):
        while len(line) > 1 and stringWidth(line, font, FONT_SIZE) > width:
            cut = len(line) - 1
            while cut > 1 and stringWidth(line[:cut], font, FONT_SIZE) > width:
                cut -= 1
            lines.append(line[:cut])
            line = line[cut:]
        lines.append(line)
    return "\n".join(lines)


def _room(widths: list[float]) -> list[float]:
    """What a cell of each column has for its text, inside its padding."""
    return [w - 2 * CELL_PADDING for w in widths]


def _row(line: StatementLine, widths: list[float]) -> list[str]:
    reference = line.supplier_reference + (f" / {line.reseller_reference}" if line.reseller_reference else "")
    travel = line.travel_date.isoformat() if line.travel_date else "open-dated"
    if line.kind is StatementKind.GIFT:
        travel = ""
    if line.travel_time:
        travel += f" {line.travel_time}"
    net = amount_text(line.net, line.precision) + (" *" if line.net_missing else "")
    room = _room(widths)
    return [
        _cell(reference, room[0]),
        _cell(travel, room[1]),
        _cell(f"{line.product} · {line.option}" if line.option else line.product, room[2]),
        _cell("; ".join(part for part in (line.units_text, *line.includes) if part), room[3]),
        _cell(line.status.value.replace("_", " "), room[4]),
        line.currency or "",
        amount_text(line.original, line.precision),
        amount_text(line.discount, line.precision),
        amount_text(line.retail, line.precision),
        amount_text(line.tax_retail, line.precision),
        net,
        amount_text(line.tax_net, line.precision),
        "\n".join(part for part in (amount_text(line.commission, line.precision), line.rate_text) if part),
        amount_text(line.gift_paid, line.precision) if line.gift_paid else "",
    ]


def _total_row(total: Total) -> list[str]:
    return [
        f"Total, {total.count} line{'s' if total.count != 1 else ''}", "", "", "", "",
        total.currency or "",
        amount_text(total.original, total.precision),
        amount_text(total.discount, total.precision),
        amount_text(total.retail, total.precision),
        amount_text(total.tax_retail, total.precision),
        amount_text(total.net, total.precision),
        amount_text(total.tax_net, total.precision),
        amount_text(total.commission, total.precision),
        amount_text(total.gift_paid, total.precision),
    ]  # fmt: skip


def _owed_row(total: Total) -> list[str]:
    """Under a total, what the reseller owes in its currency: the net less what gift vouchers paid."""
    return [
        "Owed: net - paid by gift voucher", "", "", "", "", total.currency or "", "", "", "", "",
        amount_text(total.owed, total.precision), "", "", "",
    ]  # fmt: skip


def _widths(width: float) -> list[float]:
    left = width - sum(w for w in WIDTHS if w is not None)
    shares = iter(SHARES)
    return [w if w is not None else left * next(shares) / sum(SHARES) for w in WIDTHS]


def _header(statement: Statement, widths: list[float]) -> Table:
    """The columns' names, in the band's colours: above the lines on the first page, and drawn
    by the page's decoration at the top of every later one."""
    names = [_cell(name, room, BOLD) for name, room in zip(columns(statement), _room(widths), strict=True)]
    header = Table([names], colWidths=widths)
    header.setStyle(
        TableStyle(
            [
                ("FONT", (0, 0), (-1, -1), BOLD, 8),
                ("TEXTCOLOR", (0, 0), (-1, -1), white),
                ("BACKGROUND", (0, 0), (-1, -1), BAND),
                ("ALIGN", (FIRST_AMOUNT, 0), (-1, -1), "RIGHT"),
                ("VALIGN", (0, 0), (-1, -1), "BOTTOM"),
                *_PADDING,
            ]
        )
    )
    return header


_PADDING = (
    ("LEFTPADDING", (0, 0), (-1, -1), CELL_PADDING),
    ("RIGHTPADDING", (0, 0), (-1, -1), CELL_PADDING),
)
_LINES = TableStyle(
    [
        *_PADDING,
        ("FONT", (0, 0), (-1, -1), REGULAR, FONT_SIZE, 10),
        ("TEXTCOLOR", (0, 0), (-1, -1), INK),
        ("ALIGN", (FIRST_AMOUNT, 0), (-1, -1), "RIGHT"),
        ("VALIGN", (0, 0), (-1, -1), "TOP"),
        ("LINEBELOW", (0, 0), (-1, -1), 0.4, RULE),
    ]
)


def _tables(statement: Statement, width: float) -> list[Flowable]:
    """The lines, `CHUNK_ROWS` a table, then the totals. One table of every line took time
    quadratic in its lines: at each page break reportlab measures again every row left."""
    widths = _widths(width)
    flow: list[Flowable] = [_header(statement, widths)]
    lines = statement.lines
    for start in range(0, len(lines), CHUNK_ROWS):
        chunk = Table([_row(line, widths) for line in lines[start : start + CHUNK_ROWS]], colWidths=widths)
        chunk.setStyle(_LINES)
        flow.append(chunk)
    if statement.totals:
        rows = [_total_row(total) for total in statement.totals]
        if any(total.gift_paid for total in statement.totals):
            rows += [_owed_row(total) for total in statement.totals]
        totals = Table(rows, colWidths=widths)
        totals.setStyle(
            TableStyle(
                [
                    ("FONT", (0, 0), (-1, -1), BOLD, 8),
                    ("TEXTCOLOR", (0, 0), (-1, -1), INK),
                    ("ALIGN", (FIRST_AMOUNT, 0), (-1, -1), "RIGHT"),
                    ("LINEABOVE", (0, 0), (-1, 0), 1, INK),
                    *_PADDING,
                    *(("SPAN", (0, row), (4, row)) for row in range(len(rows))),
                ]
            )
        )
        flow.append(totals)
    return flow


def _head(statement: Statement, supplier: Supplier) -> list[Flowable]:
    """The supplier, the reseller, the period, when it was made, and who owes whom."""
    address = supplier.contact.address
    contact = " | ".join(p for p in (supplier.contact.telephone, supplier.contact.email) if p)
    flow: list[Flowable] = [Paragraph(escape(clean(supplier.name, 120)), _TITLE)]
    for text in (address, contact):
        if text:
            flow.append(Paragraph(escape(clean(text)), _LINE))
    flow += [
        Spacer(1, 4 * mm),
        Paragraph(f"<font name='{BOLD}'>Reseller:</font> {escape(clean(statement.connection_name))}", _LINE),
        *(
            Paragraph(escape(clean(line, 200)), _LINE)
            for line in statement.reseller_address.splitlines()
            if line.strip()
        ),
        Paragraph(
            f"<font name='{BOLD}'>Period:</font> {statement.month.title} "
            f"({statement.month.first:%d %b %Y} to {statement.month.last:%d %b %Y}), by "
            f"{'travel date' if statement.basis.value == 'travel' else 'date of confirmation (UTC)'}",
            _LINE,
        ),
    ]
    if statement.created_at is not None:
        flow.append(
            Paragraph(f"<font name='{BOLD}'>Created:</font> {statement.created_at:%d %b %Y %H:%M} UTC", _LINE)
        )
    terms = statement.settlement(clean(supplier.name, 120))
    flow += [
        Paragraph(f"<font name='{BOLD}'>Payment terms:</font> {escape(clean(terms, 500))}", _LINE),
        Paragraph("Lines", _HEADING),
    ]
    return flow


class _NumberedCanvas(Canvas):
    """A canvas that holds each page back until the last is known, then writes "Page N of M"
    and `foot` at the foot of every page (reportlab's two-pass idiom)."""

    def __init__(self, target: str | IO[bytes], foot: str, width: float, **options: Any) -> None:
        super().__init__(target, **options)
        self._foot = foot
        self._width = width
        self._pages: list[dict[str, Any]] = []

    def showPage(self) -> None:
        self._pages.append(dict(self.__dict__))
        self._startPage()  # type: ignore[attr-defined]  # reportlab's own, not in its stubs

    def save(self) -> None:
        count = len(self._pages)
        for state in self._pages:
            self.__dict__.update(state)
            self.setFillColor(MUTED)
            self.setFont(REGULAR, 8)
            self.drawRightString(
                self._width - MARGIN, MARGIN, f"{self._foot} · Page {self.getPageNumber()} of {count}"
            )
            super().showPage()
        super().save()


def render_statement(statement: Statement, supplier: Supplier, paper: Paper = "A4") -> bytes:
    """The statement's PDF."""
    width, height = landscape(PAPER_SIZES[paper])
    heading = f"Statement {statement.month}"
    supplier_name = clean(supplier.name, 80)
    inner_width = width - 2 * MARGIN - 2 * FRAME_PADDING
    header = _header(statement, _widths(inner_width))
    header_height = header.wrap(inner_width, height)[1]
    top = BAND_HEIGHT + 8 * mm  # the frame's top, where a later page's column names go

    def decorate(canvas: Canvas, document: SimpleDocTemplate) -> None:
        canvas.saveState()
        canvas.setFillColor(BAND)
        canvas.rect(0, height - BAND_HEIGHT, width, BAND_HEIGHT, stroke=0, fill=1)
        canvas.setFillColor(white)
        canvas.setFont(BOLD, 13)
        canvas.drawString(MARGIN, height - BAND_HEIGHT + 6 * mm, supplier_name)
        canvas.drawRightString(width - MARGIN, height - BAND_HEIGHT + 6 * mm, heading)
        canvas.setStrokeColor(MUTED)
        canvas.line(MARGIN, MARGIN + 5 * mm, width - MARGIN, MARGIN + 5 * mm)
        canvas.setFillColor(MUTED)
        canvas.setFont(REGULAR, 8)
        canvas.drawString(
            MARGIN,
            MARGIN,
            "Amounts from each booking and gift voucher as sold. Cancelled ones at zero. * sold without a net: retail counted as net.",
        )
        canvas.restoreState()

    def decorate_later(canvas: Canvas, document: SimpleDocTemplate) -> None:
        decorate(canvas, document)
        header.drawOn(canvas, MARGIN + FRAME_PADDING, height - top - FRAME_PADDING - header_height)

    out = io.BytesIO()
    document = SimpleDocTemplate(
        out,
        pagesize=(width, height),
        leftMargin=MARGIN,
        rightMargin=MARGIN,
        # Room for the column names on every page (on the first, above the supplier's name).
        topMargin=top + header_height,
        bottomMargin=MARGIN + 9 * mm,
        title=clean(f"{heading} - {statement.connection_name}", 120),
        creator="Berth",
        invariant=True,
        pageCompression=1,
    )
    flow = _head(statement, supplier)
    if statement.lines:
        flow += _tables(statement, document.width - 2 * FRAME_PADDING)
    else:
        flow.append(Paragraph("No booking of this reseller in this period.", _LINE))
    later = decorate_later if statement.lines else decorate
    foot = clean(f"{heading} · {statement.connection_name}", 120)

    def numbered(target: str | IO[bytes], /, **options: Any) -> Canvas:
        canvas = _NumberedCanvas(target, foot, width, **options)
        if statement.created_at is not None:
            # The file's own creation date is the statement's (`invariant` would say 2000-01-01).
            made = f"D:{statement.created_at.astimezone(UTC):%Y%m%d%H%M%S}+00'00'"
            canvas.setDateFormatter(lambda *_: made)
        return canvas

    document.build(flow, onFirstPage=decorate, onLaterPages=later, canvasmaker=numbered)
    return out.getvalue()
