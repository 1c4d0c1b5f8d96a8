"""QR codes for share links, as inline SVG (segno, pure Python)."""

from __future__ import annotations

import segno


def qr_svg(url: str) -> str:
    """An SVG QR code of ``url`` that scales with its container (no fixed size, no XML header)."""
    return segno.make(url, error="m").svg_inline(scale=4, omitsize=True, title=url)
