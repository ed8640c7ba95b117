"""The offline analyst's long-term notes: one Markdown list in `/memories/preferences.md`.

Remembering reads the file and writes it back with the new line (deepagents' `write_file`
overwrites, and the model knows nothing of other threads but what the file says); recalling reads
it. Where the graph has a store, `/memories/` outlives the thread (agent/memories.py).
"""

from __future__ import annotations

from langchain_core.messages import ToolMessage

PREFERENCES = "/memories/preferences.md"


def notes_of(read: ToolMessage) -> list[str]:
    """The list's items in a `read_file` result: none when the file is not there (an error) or
    empty; the status header (`@@ lines 1-2 of 2 @@`) above the verbatim content is no item."""
    if read.status == "error":
        return []
    return [line[2:].strip() for line in read.text.splitlines() if line.startswith("- ")]


def with_note(read: ToolMessage, note: str) -> str:
    """The file as read with `note` as its last item (once: saying it again moves it last)."""
    notes = [n for n in notes_of(read) if n != note]
    return "".join(f"- {n}\n" for n in [*notes, note])


def remembered(note: str, zh: bool) -> str:
    # Whether it outlives this thread is the graph's store's to say, so the answer does not promise it.
    return f"好的，我记住了：{note}（记在 {PREFERENCES}）。" if zh else f"Noted: {note} (kept in {PREFERENCES})."


def recalled(read: ToolMessage, zh: bool) -> str:
    notes = notes_of(read)
    if not notes:
        return ("我还没有记下关于你的偏好。你可以说“记住：……”。" if zh
                else "I have nothing noted about you yet. Say \"remember: …\" and I will keep it.")
    lines = "\n".join(f"- {n}" for n in notes)
    head = f"我记得你的这些偏好（{PREFERENCES}）：" if zh else f"What I remember about you ({PREFERENCES}):"
    return f"{head}\n{lines}"
