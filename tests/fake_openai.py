"""A real HTTP server on 127.0.0.1 that speaks the OpenAI chat-completions API with
scripted replies: the one stand-in the tests allow (for a remote LLM service).

The request's `model` field picks a script; each script sees how many times it has been
called, so "429, then an answer" or "wrong, then fixed" are easy to write.
"""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class FakeOpenAI:
    def __init__(self, scripts: dict):
        self.scripts = scripts
        self.calls: dict[str, list[dict]] = {}
        self.lock = threading.Lock()
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                model = body["model"]
                with outer.lock:
                    calls = outer.calls.setdefault(model, [])
                    calls.append({"body": body, "auth": self.headers.get("Authorization"),
                                  "headers": dict(self.headers)})
                    n = len(calls)
                status, headers, payload = outer.scripts[model](n, body)
                if status == "hang":
                    time.sleep(payload)
                    return
                # bytes go out as they are: a server that sends what is not JSON at all
                data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
                self.send_response(status)
                for k, v in {"Content-Type": "application/json", **headers}.items():
                    self.send_header(k, v)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.server.shutdown()
        self.server.server_close()


def completion(text: str, prompt_tokens: int = 1000, completion_tokens: int = 200):
    return (200, {}, {
        "id": "chatcmpl-test", "object": "chat.completion", "created": 0, "model": "fake",
        "choices": [{"index": 0, "finish_reason": "stop",
                     "message": {"role": "assistant", "content": text}}],
        "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
                  "total_tokens": prompt_tokens + completion_tokens},
    })


def error(status: int, message: str, headers: dict | None = None):
    return (status, headers or {}, {"error": {"message": message, "type": "test",
                                              "code": str(status)}})
