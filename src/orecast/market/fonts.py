"""A font with Chinese glyphs for chart PNGs, when the machine has one.

matplotlib's bundled DejaVu fonts have no CJK glyphs: Chinese text would render as empty boxes. No
CJK font is bundled with orecast (a Noto CJK face is 16-20 MB per weight; the PyPI packages that
wrap one are unmaintained 0.0.x uploads). Instead the system's font is used when there is one —
Debian/Ubuntu `fonts-noto-cjk`, `fonts-wqy-microhei`, Source Han Sans … — and charts fall back to
English labels when there is none, so a chart never shows boxes.
"""

from __future__ import annotations

import os
from pathlib import Path

# Families tried in order (matplotlib's names for them); any file among them that really has the
# glyphs is used.
CJK_FAMILIES: tuple[str, ...] = (
    "Noto Sans CJK SC", "Noto Sans CJK JP", "Noto Sans SC", "Source Han Sans SC",
    "Source Han Sans CN", "WenQuanYi Micro Hei", "WenQuanYi Zen Hei", "AR PL UMing CN",
    "AR PL UKai CN", "Droid Sans Fallback",
)
PROBE = "铁矿石价格预测"


def has_glyphs(path: str | Path, text: str = PROBE) -> bool:
    from matplotlib.ft2font import FT2Font

    try:
        face = FT2Font(str(path))
    except (OSError, RuntimeError, ValueError):
        return False
    return all(face.get_char_index(ord(ch)) for ch in text)


def cjk_font() -> Path | None:
    """A font file that renders Chinese: `$ORECAST_CJK_FONT` (a path; empty or `none` turns
    Chinese charts off), else the first installed family of CJK_FAMILIES; None if there is none."""
    explicit = os.environ.get("ORECAST_CJK_FONT")
    if explicit is not None:
        if explicit.strip().lower() in ("", "none"):
            return None
        return Path(explicit) if has_glyphs(explicit) else None
    from matplotlib import font_manager

    by_name: dict[str, list[str]] = {}
    for entry in font_manager.fontManager.ttflist:
        by_name.setdefault(entry.name, []).append(entry.fname)
    for family in CJK_FAMILIES:
        for fname in by_name.get(family, []):
            if has_glyphs(fname):
                return Path(fname)
    return None
