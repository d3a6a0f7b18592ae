"""A camera for Chromium's fake capture device: a Y4M video (YUV 4:2:0) of a QR code, drawn
by segno, on a white page held in front of the lens; or a ticket as Berth renders it (its PDF
drawn by pdfium, cut around its QR code) shown and taken away in a given rhythm."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pypdfium2
import segno
import zxingcpp
from PIL import Image

WHITE, BLACK, NEUTRAL = 235, 16, 128  # studio-range luma; chroma with no colour
FPS = 10


def _header(width: int, height: int) -> bytes:
    return f"YUV4MPEG2 W{width} H{height} F{FPS}:1 Ip A1:1 C420jpeg\n".encode()


def qr_video(text: str, path: Path, *, width: int = 640, height: int = 480, frames: int = 10) -> Path:
    """Write `frames` frames showing `text` as a QR code to `path` (Chromium loops the file)."""
    code = segno.make_qr(text, error="m")
    modules = int(code.symbol_size(scale=1, border=4)[0])
    scale = int(min(width, height) * 0.85) // modules
    side = modules * scale
    left, top = (width - side) // 2, (height - side) // 2
    luma = bytearray([WHITE]) * (width * height)
    for y, row in enumerate(code.matrix_iter(scale=scale, border=4)):
        start = (top + y) * width + left
        luma[start : start + side] = bytes(BLACK if dark else WHITE for dark in row)
    chroma = bytes([NEUTRAL]) * ((width // 2) * (height // 2) * 2)
    with path.open("wb") as video:
        video.write(_header(width, height))
        for _ in range(frames):
            video.write(b"FRAME\n")
            video.write(luma)
            video.write(chroma)
    return path


def ticket_picture(pdf: bytes, *, width: int = 640, height: int = 480) -> bytes:
    """The first page of a ticket PDF as the camera sees it held up: drawn at 150 dpi, cut
    around its QR code (where zxing-cpp finds it, with a margin of white page and a little of
    what is printed beside it) and fitted into the frame; the frame's luma plane."""
    document = pypdfium2.PdfDocument(pdf)
    try:
        page = document[0].render(scale=150 / 72).to_pil().convert("L")
    finally:
        document.close()
    [found] = [f for f in zxingcpp.read_barcodes(page) if f.format == zxingcpp.BarcodeFormat.QRCode]
    corners = [found.position.top_left, found.position.top_right, found.position.bottom_left]
    left, right = min(c.x for c in corners), max(c.x for c in corners)
    top, bottom = min(c.y for c in corners), max(c.y for c in corners)
    margin = (right - left) // 3
    cut = page.crop((left - margin, top - margin, right + margin, bottom + margin))
    side = int(min(width, height) * 0.9)
    cut = cut.resize((side, side), Image.Resampling.LANCZOS)
    frame = Image.new("L", (width, height), 255)
    frame.paste(cut, ((width - side) // 2, (height - side) // 2))
    return frame.point(lambda v: BLACK + v * (WHITE - BLACK) // 255).tobytes()


def blank_picture(*, width: int = 640, height: int = 480) -> bytes:
    """Nothing in front of the camera: a plain grey wall."""
    return bytes([120]) * (width * height)


def motion_video(
    scenes: Sequence[tuple[bytes, float]], path: Path, *, width: int = 640, height: int = 480
) -> Path:
    """A video of `scenes`, each a picture (a luma plane) held for its seconds, in order
    (Chromium loops the file, so the rhythm repeats)."""
    chroma = bytes([NEUTRAL]) * ((width // 2) * (height // 2) * 2)
    with path.open("wb") as video:
        video.write(_header(width, height))
        for luma, seconds in scenes:
            assert len(luma) == width * height
            for _ in range(round(seconds * FPS)):
                video.write(b"FRAME\n")
                video.write(luma)
                video.write(chroma)
    return path
