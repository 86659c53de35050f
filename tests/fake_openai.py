"""A real HTTP server on 127.0.0.1 that speaks the OpenAI chat-completions API with
scripted replies: the one stand-in the tests allow (for a remote LLM service).

The request's `model` field picks a script; each script sees how many times it has been
called, so "429, then an answer" or "wrong, then fixed" are easy to write. A model with
no script gets OpenAI's own answer to an unknown model (HTTP 404, `model_not_found`), and
`GET /v1/models` lists the scripted models (or the `models` given: a list of ids, or a
scripted reply), as a real server does: what the run's preflight reads
(wirebench/agents/preflight.py).
"""

from __future__ import annotations

import contextlib
import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class FakeOpenAI:
    def __init__(self, scripts: dict, port: int = 0, models: list[str] | tuple | None = None):
        self.scripts = scripts
        # What GET /v1/models answers: the scripted models by default, these ids, or a
        # scripted reply (status, headers, payload) for a server that lists none.
        self.models = models
        self.calls: dict[str, list[dict]] = {}
        # Each GET /v1/models, apart from `calls`: a listing is no chat completion.
        self.listings: list[dict] = []
        self.lock = threading.Lock()
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def reply(self, status, headers, payload):
                # bytes go out as they are: a server that sends what is not JSON at all
                data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
                self.send_response(status)
                for k, v in {"Content-Type": "application/json", **headers}.items():
                    self.send_header(k, v)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self):
                with outer.lock:
                    outer.listings.append({"path": self.path,
                                           "auth": self.headers.get("Authorization"),
                                           "headers": dict(self.headers)})
                if self.path.rstrip("/") != "/v1/models":
                    return self.reply(*error(404, f"no route GET {self.path}"))
                if isinstance(outer.models, tuple):
                    return self.reply(*outer.models)
                ids = list(outer.scripts) if outer.models is None else list(outer.models)
                self.reply(200, {}, {"object": "list", "data": [
                    {"id": i, "object": "model", "created": 0, "owned_by": "fake"}
                    for i in ids]})

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                model = body["model"]
                with outer.lock:
                    calls = outer.calls.setdefault(model, [])
                    calls.append({"body": body, "auth": self.headers.get("Authorization"),
                                  "headers": dict(self.headers)})
                    n = len(calls)
                if model not in outer.scripts:  # as OpenAI answers it, not a dropped line
                    return self.reply(404, {}, {"error": {
                        "message": f"The model `{model}` does not exist or you do not have "
                                   "access to it.", "type": "invalid_request_error",
                        "param": None, "code": "model_not_found"}})
                status, headers, payload = outer.scripts[model](n, body)
                if status == "hang":
                    time.sleep(payload)
                    return
                self.reply(status, headers, payload)

        self.server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
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


def tool_calls(*calls: tuple[str, object], prompt_tokens: int = 500,
               completion_tokens: int = 50):
    """A reply that calls tools: each call is (name, arguments), where arguments is an
    object (sent as JSON) or a str (sent as it is, malformed JSON included)."""
    return (200, {}, {
        "id": "chatcmpl-tools", "object": "chat.completion", "created": 0, "model": "fake",
        "choices": [{"index": 0, "finish_reason": "tool_calls", "message": {
            "role": "assistant", "content": None,
            "tool_calls": [{"id": f"call_{i}", "type": "function", "function": {
                "name": name, "arguments": args if isinstance(args, str) else json.dumps(args)}}
                for i, (name, args) in enumerate(calls, start=1)]}}],
        "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
                  "total_tokens": prompt_tokens + completion_tokens},
    })


def task_of(body: dict, answers: dict[str, dict]) -> dict:
    """The answer for the task a request is about: the task's title, the first line under
    the prompt pack's `# Your task`, picks it from answers {title: op-list}."""
    text = next(m["content"] for m in body["messages"] if m["role"] == "user")
    title = text.split("# Your task\n\n", 1)[1].splitlines()[0].lstrip("# ").strip()
    return answers[title]


def reference_model(answers: dict[str, dict]):
    """A model that knows every task's reference answer. Asked with tools, it draws the
    answer (a dry run), then submits it; asked without, it replies with the op-list."""
    def script(n, body):
        ops = task_of(body, answers)
        if not body.get("tools"):
            return completion("```json\n" + json.dumps(ops) + "\n```")
        drawn = sum(m["role"] == "tool" for m in body["messages"])
        return tool_calls(("draw", {"oplist": ops}) if drawn == 0 else
                          ("submit", {"oplist": ops}))
    return script


def main(argv=None) -> int:
    """Serve the reference model on 127.0.0.1, so the openai kinds run with no key:

        python tests/fake_openai.py --tasks tasks --port 8765
        # config: {kind: openai, base_url: "http://127.0.0.1:8765/v1", model: reference}
        #         (add tools: true to try the tool loop)
    """
    import argparse
    from pathlib import Path

    ap = argparse.ArgumentParser(description=main.__doc__.splitlines()[0])
    ap.add_argument("--tasks", default="tasks", help="the tasks folder")
    ap.add_argument("--port", type=int, default=8765)
    args = ap.parse_args(argv)
    answers = {}
    for folder in sorted(Path(args.tasks).iterdir()):
        if (folder / "task.md").is_file() and (folder / "reference_ops.json").is_file():
            title = (folder / "task.md").read_text().splitlines()[0].lstrip("# ").strip()
            answers[title] = json.loads((folder / "reference_ops.json").read_text())
    server = FakeOpenAI({"reference": reference_model(answers)}, port=args.port)
    print(f"serving {len(answers)} tasks' answers as model 'reference' at {server.base_url}")
    with server, contextlib.suppress(KeyboardInterrupt):
        server.thread.join()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
