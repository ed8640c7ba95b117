"""Stored text on the terminal: shown as it is, never interpreted.

A title or message is whatever a user or a model wrote: Rich markup in it (`[/oops]`) must not be parsed
(it would crash the command or restyle the screen), and terminal control sequences (`\\x1b[2J`, OSC
titles, C1 codes) must not reach the terminal, or stored text could clear the screen or rewrite what
the user sees. Control characters other than newline and tab are shown as escapes (`\\x1b`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from rich import box
from rich.cells import cell_len
from rich.console import JustifyMethod
from rich.table import Table
from rich.text import Text

# C0 controls but tab and newline, DEL, and C1 controls (0x9b is a one-byte CSI on some terminals).
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def escaped(text: str) -> str:
    """`text` with control characters written as `\\xNN`."""
    return _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", text)


def stored(text: object, style: str = "") -> Text:
    """Stored text as a Rich `Text`: no markup parsed, control characters escaped."""
    return Text(escaped(str(text)), style=style)


# A sharing column narrower than this shows too little to read: optional columns are hidden first.
MIN_SHARE = 16


@dataclass(frozen=True)
class OneLineColumn:
    """A column of a `one_line_table`: sized to its widest cell up to `cap`, or, with no cap, sharing
    what the others leave. `drop`: on a narrow terminal the columns with the highest rank are hidden
    first; 0 is never hidden."""

    name: str
    cap: int | None = None
    justify: JustifyMethod = "left"
    drop: int = 0


def one_line_table(columns: Sequence[OneLineColumn], rows: Sequence[Sequence[str | None]], width: int) -> tuple[Table, list[str]]:
    """Stored text as a table of one line per row, within `width` terminal cells (a CJK character
    takes two): long cells are cut with an ellipsis. Returns the table and the names of the columns
    it hid to leave the sharing ones at least `MIN_SHARE` cells."""
    cells = [[" ".join((text or "").split()) for text in row] for row in rows]
    widths = [
        min(max([cell_len(col.name), *(cell_len(row[i]) for row in cells)]), col.cap) if col.cap else 0
        for i, col in enumerate(columns)
    ]
    shown = list(range(len(columns)))

    def room() -> int:
        # each column: a cell of padding either side and a separator, plus one for the last edge
        return width - sum(widths[i] + 3 for i in shown) - 1

    sharing = [i for i in shown if columns[i].cap is None]
    for i in sorted((i for i in shown if columns[i].drop), key=lambda i: -columns[i].drop):
        if room() >= MIN_SHARE * len(sharing):
            break
        shown.remove(i)
    share = max(room() // max(len(sharing), 1), MIN_SHARE // 2)
    table = Table(box=box.SIMPLE_HEAD)
    for i in shown:
        col = columns[i]
        table.add_column(col.name, justify=col.justify, width=widths[i] or share, no_wrap=True, overflow="ellipsis")
    for row in cells:
        texts = []
        for i in shown:
            text = stored(row[i])
            text.truncate(widths[i] or share, overflow="ellipsis")
            texts.append(text)
        table.add_row(*texts)
    return table, [columns[i].name for i in range(len(columns)) if i not in shown]
