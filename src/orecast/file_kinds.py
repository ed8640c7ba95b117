"""What a path that is no regular file is, in a word a user understands: a device or a pipe given as an
input file must not even be opened (`/dev/zero` never ends, a FIFO blocks until someone writes).

Shared by the market data's CSV files and the checkpoint store's thread archives."""

from __future__ import annotations

import stat


def special_kind(mode: int) -> str | None:
    """What a non-regular file (of `os.stat`'s `st_mode`) is, or None for a regular one."""
    if stat.S_ISREG(mode):
        return None
    if stat.S_ISDIR(mode):
        return "folder"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "device"
    if stat.S_ISFIFO(mode):
        return "pipe"
    if stat.S_ISSOCK(mode):
        return "socket"
    return "special file"
