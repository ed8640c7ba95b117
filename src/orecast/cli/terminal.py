"""Stored text on the terminal: shown as it is, never interpreted.

A title or message is whatever a user or a model wrote: Rich markup in it (`[/oops]`) must not be parsed
(it would crash the command or restyle the screen), and terminal control sequences (`\\x1b[2J`, OSC
titles, C1 codes) must not reach the terminal, or stored text could clear the screen or rewrite what
the user sees. Control characters other than newline and tab are shown as escapes (`\\x1b`).
"""

from __future__ import annotations

import re

from rich.text import Text

# C0 controls but tab and newline, DEL, and C1 controls (0x9b is a one-byte CSI on some terminals).
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def escaped(text: str) -> str:
    """`text` with control characters written as `\\xNN`."""
    return _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", text)


def stored(text: object, style: str = "") -> Text:
    """Stored text as a Rich `Text`: no markup parsed, control characters escaped."""
    return Text(escaped(str(text)), style=style)
