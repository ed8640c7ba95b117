"""A scripted OpenAI-compatible server (chat.completions, SSE streaming, tool calls) on 127.0.0.1.

It plays a tiny LLM: to a user question it answers with a `latest_price` tool call; once the
tool result is in the conversation it writes a sentence quoting the value from that result, as
several streamed chunks. Requests are recorded so tests can check what the client really sent.
"""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


class ScriptedServer:
    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        server = self
        self._lock = threading.Lock()

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:  # keep pytest output clean
                pass

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                with server._lock:
                    server.requests.append({"path": self.path, "body": body,
                                            "auth": self.headers.get("Authorization")})
                reply = server.script(body)
                if body.get("stream"):
                    self.send_response(200)
                    self.send_header("Content-Type", "text/event-stream")
                    self.end_headers()
                    for chunk in server.chunks(body, reply):
                        self.wfile.write(f"data: {json.dumps(chunk)}\n\n".encode())
                        self.wfile.flush()
                    self.wfile.write(b"data: [DONE]\n\n")
                else:
                    data = json.dumps(server.completion(body, reply)).encode()
                    self.send_response(200)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        # `shutdown` waits for the serving loop's next poll: at the default 0.5 s that was half a second
        # of every test's teardown.
        self.thread = threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"

    def __enter__(self) -> ScriptedServer:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    # ---- the script ---------------------------------------------------------------------

    def script(self, body: dict[str, Any]) -> dict[str, Any]:
        last = body["messages"][-1]
        tools = {t["function"]["name"] for t in body.get("tools", [])}
        if last["role"] == "user" and "falls 5%" in str(last["content"]) and "price_scenario" in tools:
            return {"tool": {"id": f"call_{len(self.requests)}", "name": "price_scenario",
                             "arguments": json.dumps({"driver": "steel_output", "shock": -5})}}
        if last["role"] == "tool" and '"driver"' in last["content"]:
            result = json.loads(last["content"])
            return {"text": f"If steel output fell 5%, iron ore would historically move about "
                            f"{result['effect_pct']}% (R² {result['r2']}, sample to "
                            f"{result['sample']['last']}); this is not causation."}
        if last["role"] == "user" and "latest_price" in tools:
            return {"tool": {"id": f"call_{len(self.requests)}", "name": "latest_price",
                             "arguments": json.dumps({"series": "iron_ore_wb_monthly"})}}
        if last["role"] == "tool":
            result = json.loads(last["content"])
            point = result["latest"]
            return {"text": f"The latest iron ore price is {point['value']} {result['unit']} "
                            f"({point['date']}), source: {result['source']}."}
        return {"text": "I can only talk about iron ore."}

    def chunks(self, body: dict[str, Any], reply: dict[str, Any]) -> list[dict[str, Any]]:
        base = {"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": int(time.time()),
                "model": body["model"]}
        out: list[dict[str, Any]] = []
        if "tool" in reply:
            tool = reply["tool"]
            args = tool["arguments"]
            out.append({**base, "choices": [{"index": 0, "delta": {"role": "assistant", "tool_calls": [
                {"index": 0, "id": tool["id"], "type": "function",
                 "function": {"name": tool["name"], "arguments": ""}}]}, "finish_reason": None}]})
            for i in range(0, len(args), 8):  # arguments arrive in pieces, as from a real model
                out.append({**base, "choices": [{"index": 0, "delta": {"tool_calls": [
                    {"index": 0, "function": {"arguments": args[i:i + 8]}}]}, "finish_reason": None}]})
            out.append({**base, "choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]})
            return out
        words = reply["text"].split(" ")
        out.append({**base, "choices": [{"index": 0, "delta": {"role": "assistant", "content": ""},
                                         "finish_reason": None}]})
        for i, word in enumerate(words):
            piece = word if i == len(words) - 1 else word + " "
            out.append({**base, "choices": [{"index": 0, "delta": {"content": piece},
                                             "finish_reason": None}]})
        out.append({**base, "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]})
        return out

    def completion(self, body: dict[str, Any], reply: dict[str, Any]) -> dict[str, Any]:
        message: dict[str, Any] = {"role": "assistant", "content": reply.get("text")}
        if "tool" in reply:
            t = reply["tool"]
            message["tool_calls"] = [{"id": t["id"], "type": "function",
                                      "function": {"name": t["name"], "arguments": t["arguments"]}}]
        return {"id": "chatcmpl-1", "object": "chat.completion", "created": int(time.time()),
                "model": body["model"],
                "choices": [{"index": 0, "message": message,
                             "finish_reason": "tool_calls" if "tool" in reply else "stop"}],
                "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}}
