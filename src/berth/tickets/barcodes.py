"""A ticket's code as the modules of each barcode, from kept encoders: segno (QR), python-barcode
(Code 128) and aztec-code-generator (Aztec). The PDF draws the modules as vector shapes."""

from __future__ import annotations

from collections.abc import Sequence

import aztec_code_generator
import barcode
import segno

# Rows of modules, 1 dark, 0 light, without a quiet zone.
Matrix = Sequence[Sequence[int]]


def qr_matrix(code: str) -> Matrix:
    return segno.make_qr(code, error="m").matrix


def aztec_matrix(code: str) -> Matrix:
    return aztec_code_generator.AztecCode(code).matrix  # type: ignore[no-any-return]


def code128_bars(code: str) -> str:
    """The modules of a Code 128 symbol left to right, "1" a bar, "0" a space."""
    symbol = barcode.get_barcode_class("code128")(code)
    return "".join(symbol.build())
