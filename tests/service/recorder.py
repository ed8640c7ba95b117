"""A loopback HTTP endpoint that answers every request `{}` and keeps what it was sent: stands in for a
LangSmith or OTLP collector, so tests see what the service exports without the network."""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


@dataclass
class Received:
    method: str
    path: str
    headers: dict[str, str]
    body: bytes


@dataclass
class Recorder:
    server: ThreadingHTTPServer
    received: list[Received] = field(default_factory=list)

    @property
    def url(self) -> str:
        host, port = self.server.server_address[:2]
        return f"http://{host}:{port}"

    @classmethod
    def start(cls) -> Recorder:
        recorder: Recorder

        class Handler(BaseHTTPRequestHandler):
            def _answer(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                body = self.rfile.read(length) if length else b""
                recorder.received.append(Received(self.command, self.path, dict(self.headers), body))
                payload = json.dumps({}).encode()
                self.send_response(200)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            do_GET = do_POST = do_PATCH = do_PUT = _answer

            def log_message(self, *args: object) -> None:
                pass

        recorder = cls(ThreadingHTTPServer(("127.0.0.1", 0), Handler))
        threading.Thread(target=recorder.server.serve_forever, daemon=True).start()
        return recorder

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()
