"""One thread's history answer, as the page asks for it after each answer (`limit` 500, gzip).

    python -m bench.history_request --db /tmp/long.sqlite3 [--runs 3] [--limit 500]

`--db` is a conversation made by `python -m bench.web_long_thread` (its thread id in the `.thread`
file beside it), served by `orecast serve` as that bench serves it, on a copy of the database. Each
run POSTs `/threads/<id>/history` with Accept-Encoding gzip and prints the server's time to the
answer's headers (the answer is made whole before they go), the time to its last byte, the bytes
on the wire and decoded, and the checkpoints in it.
"""

from __future__ import annotations

import argparse
import gzip
import json
import shutil
import tempfile
import time
from pathlib import Path

import httpx

from bench.web_long_thread import serve


def one_request(url: str, thread_id: str, limit: int) -> dict[str, float | int]:
    start = time.monotonic()
    with httpx.Client(timeout=300) as http, http.stream(
        "POST", f"{url}/threads/{thread_id}/history", json={"limit": limit}, headers={"Accept-Encoding": "gzip"}
    ) as answer:
        first = time.monotonic() - start
        wire = b"".join(answer.iter_raw())
        total = time.monotonic() - start
        answer.raise_for_status()
        gzipped = answer.headers.get("content-encoding") == "gzip"
    plain = gzip.decompress(wire) if gzipped else wire
    return {
        "first_byte_s": round(first, 2), "total_s": round(total, 2), "checkpoints": len(json.loads(plain)),
        "plain_mb": round(len(plain) / 1e6, 1), "wire_mb": round(len(wire) / 1e6, 2),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--db", type=Path, required=True)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--limit", type=int, default=500)
    args = parser.parse_args()
    thread_id = args.db.with_suffix(".thread").read_text().strip()
    work = Path(tempfile.mkdtemp(prefix="orecast-history-bench-"))
    db = work / "copy.sqlite3"
    for suffix in ("", "-wal", "-shm"):  # a WAL the server did not fold back is part of the database
        if Path(f"{args.db}{suffix}").exists():
            shutil.copy(f"{args.db}{suffix}", f"{db}{suffix}")
    proc, url = serve(db, work, None)
    try:
        for run in range(args.runs):
            print(f"run {run}: " + json.dumps(one_request(url, thread_id, args.limit)), flush=True)
    finally:
        proc.terminate()
        proc.wait(30)
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
