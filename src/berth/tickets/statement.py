"""The PDF of a connection's monthly statement (reportlab), in the tickets' house style: their
fonts, colours and band, landscape so that a line fits on one row. The supplier's name and
address head it, then the reseller, the period, when it was made, the payment terms and who owes
whom, the lines (a table repeated under the band on every page: what each includes, its tax and
the rate applied) and the totals per currency. Every page's foot names the reseller and says
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
from reportlab.pdfgen.canvas import Canvas
from reportlab.platypus import Flowable, Paragraph, SimpleDocTemplate, Spacer, Table, TableStyle

from berth.domain.catalog import Supplier
from berth.domain.statements import Statement, StatementLine, Total, amount_text
from berth.tickets.pdf import BAND, BOLD, INK, MARGIN, MUTED, PAPER_SIZES, REGULAR, Paper, clean

RULE = HexColor("#d5dde5")
BAND_HEIGHT = 16 * mm
_TEXT = ParagraphStyle("cell", fontName=REGULAR, fontSize=8, leading=10, textColor=INK)
_HEADER = ParagraphStyle("header", fontName=BOLD, fontSize=7.5, leading=9, textColor=white)
_TITLE = ParagraphStyle("title", fontName=BOLD, fontSize=17, leading=21, textColor=INK, spaceAfter=2)
_LINE = ParagraphStyle("line", fontName=REGULAR, fontSize=10, leading=13, textColor=INK)
_HEADING = ParagraphStyle(
    "heading", fontName=BOLD, fontSize=11, leading=14, textColor=INK, spaceBefore=10, spaceAfter=4
)
FIRST_AMOUNT = 6  # the columns from Retail on are amounts, right-aligned


def columns(statement: Statement) -> tuple[str, ...]:
    """The table's columns; Rate: the commission (or margin) as a percentage of retail."""
    margin = statement.margin_label
    return (
        "Reference", "Travel", "Product · option", "Units · includes", "Status", "Currency",
        "Retail", "Tax in retail", "Net", "Tax in net", margin, "Rate",
    )  # fmt: skip


# The columns' shares of the frame's width (A4 or Letter).
SHARES = (28, 24, 38, 36, 22, 22, 19, 17, 19, 17, 27, 16)
FRAME_PADDING = 6  # points, each side: reportlab's default


def _cell(text: str, limit: int = 200) -> Paragraph:
    return Paragraph(escape(clean(text, limit)), _TEXT)


def _row(line: StatementLine) -> list[str | Paragraph]:
    reference = line.supplier_reference + (f" / {line.reseller_reference}" if line.reseller_reference else "")
    travel = line.travel_date.isoformat() if line.travel_date else "open-dated"
    if line.travel_time:
        travel += f" {line.travel_time}"
    net = amount_text(line.net, line.precision) + (" *" if line.net_missing else "")
    return [
        _cell(reference),
        _cell(travel),
        _cell(f"{line.product} · {line.option}"),
        _cell("; ".join((line.units_text, *line.includes))),
        line.status.value.replace("_", " "),
        line.currency or "",
        amount_text(line.retail, line.precision),
        amount_text(line.tax_retail, line.precision),
        net,
        amount_text(line.tax_net, line.precision),
        amount_text(line.commission, line.precision),
        line.rate_text,
    ]


def _total_row(total: Total) -> list[str]:
    return [
        f"Total, {total.count} line{'s' if total.count != 1 else ''}", "", "", "", "",
        total.currency or "",
        amount_text(total.retail, total.precision),
        amount_text(total.tax_retail, total.precision),
        amount_text(total.net, total.precision),
        amount_text(total.tax_net, total.precision),
        amount_text(total.commission, total.precision),
        "",
    ]  # fmt: skip


def _table(statement: Statement, width: float) -> Table:
    header: list[str | Paragraph] = [Paragraph(escape(name), _HEADER) for name in columns(statement)]
    rows: list[list[str | Paragraph]] = [header, *(_row(line) for line in statement.lines)]
    totals = [_total_row(total) for total in statement.totals]
    widths = [width * share / sum(SHARES) for share in SHARES]
    table = Table([*rows, *totals], colWidths=widths, repeatRows=1)
    first_total = len(rows)
    style: list[Any] = [
        ("FONT", (0, 0), (-1, 0), BOLD, 8),
        ("FONT", (0, 1), (-1, -1), REGULAR, 8),
        ("TEXTCOLOR", (0, 0), (-1, -1), INK),
        ("TEXTCOLOR", (0, 0), (-1, 0), white),
        ("BACKGROUND", (0, 0), (-1, 0), BAND),
        ("ALIGN", (FIRST_AMOUNT, 0), (-1, -1), "RIGHT"),
        ("VALIGN", (0, 0), (-1, -1), "TOP"),
        ("LINEBELOW", (0, 1), (-1, first_total - 1), 0.4, RULE),
    ]
    if totals:
        style += [
            ("FONT", (0, first_total), (-1, -1), BOLD, 8),
            ("LINEABOVE", (0, first_total), (-1, first_total), 1, INK),
            ("SPAN", (0, first_total), (4, first_total)),
        ]
        style += [("SPAN", (0, row), (4, row)) for row in range(first_total + 1, first_total + len(totals))]
    table.setStyle(TableStyle(style))
    return table


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
            "Amounts from each booking as sold. Cancelled bookings at zero. * sold without a net: retail counted as net.",
        )
        canvas.restoreState()

    out = io.BytesIO()
    document = SimpleDocTemplate(
        out,
        pagesize=(width, height),
        leftMargin=MARGIN,
        rightMargin=MARGIN,
        topMargin=BAND_HEIGHT + 8 * mm,
        bottomMargin=MARGIN + 9 * mm,
        title=clean(f"{heading} - {statement.connection_name}", 120),
        creator="Berth",
        invariant=True,
        pageCompression=1,
    )
    flow = _head(statement, supplier)
    if statement.lines:
        flow.append(_table(statement, document.width - 2 * FRAME_PADDING))
    else:
        flow.append(Paragraph("No booking of this reseller in this period.", _LINE))
    foot = clean(f"{heading} · {statement.connection_name}", 120)

    def numbered(target: str | IO[bytes], /, **options: Any) -> Canvas:
        canvas = _NumberedCanvas(target, foot, width, **options)
        if statement.created_at is not None:
            # The file's own creation date is the statement's (`invariant` would say 2000-01-01).
            made = f"D:{statement.created_at.astimezone(UTC):%Y%m%d%H%M%S}+00'00'"
            canvas.setDateFormatter(lambda *_: made)
        return canvas

    document.build(flow, onFirstPage=decorate, onLaterPages=decorate, canvasmaker=numbered)
    return out.getvalue()
