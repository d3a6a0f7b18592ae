"""A camera for Chromium's fake capture device: a Y4M video (YUV 4:2:0) of a QR code, drawn
by segno, on a white page held in front of the lens."""

from __future__ import annotations

from pathlib import Path

import segno

WHITE, BLACK, NEUTRAL = 235, 16, 128  # studio-range luma; chroma with no colour


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
        video.write(f"YUV4MPEG2 W{width} H{height} F10:1 Ip A1:1 C420jpeg\n".encode())
        for _ in range(frames):
            video.write(b"FRAME\n")
            video.write(luma)
            video.write(chroma)
    return path
