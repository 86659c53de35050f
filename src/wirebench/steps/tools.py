"""The tools an agent drives akcli with, bound to one pair: the same validate, draw and
nets the scored pair runs, on a scratch sheet in the pair's own folder.

  list_ops            akcli's op vocabulary                         (inspect)
  op_schema(op)       one op's exact field shape                    (inspect)
  pins(lib_id)        a symbol's pin table, configured libraries only (inspect)
  nets()              the netlist of the last draw (or the base sheet) (inspect)
  validate(oplist)    `akcli ops validate` + the path guard          (design)
  draw(oplist)        a dry run of the scored draw: a fresh sheet, the task's base
                      design, the op-list behind --strict-nets; the net diff and errors
  submit(oplist)      the answer; it ends the loop                   (design)

A task may name its surface (`tool_surface: inspect | design`, default design). A call
to a tool that does not exist or is not on the surface is refused before it runs
(`invalid`); a call the path guard or the library list refuses is a `denied`; a valid
call whose tool then fails is a `failed`. Every akcli call runs confined to the pair's
folder (steps/confined.py), as the scored steps do, so nothing an argument says can read
or write outside it. What goes back to the model is capped at RESULT_CAP bytes.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import time
from dataclasses import dataclass
from pathlib import Path

from wirebench.evidence.files import scratch_dir, write_json

SCHEMA = "wirebench.tool/1"
RESULT_CAP = 8 * 1024
# A step's arguments are kept in the trajectory, so that `wirebench replay` can run the
# calls again; an argument past this size is kept as its hash only (not replayable).
KEPT_ARGS = 256 * 1024
INSPECT = ("list_ops", "op_schema", "pins", "nets")
DESIGN = (*INSPECT, "validate", "draw", "submit")
SURFACES = {"inspect": INSPECT, "design": DESIGN}
# JSON Schemas of the arguments, as the chat-completions `tools` field and MCP want them.
OPLIST_ARG = {"type": "object", "properties": {"oplist": {
    "type": "object", "description": "an akcli op-list: {\"protocol_version\": 2, "
    "\"target_format\": \"kicad\", \"ops\": [...]}, or a refusal"}},
    "required": ["oplist"]}
SPECS = {
    "list_ops": ("akcli's ops and macros, each with its required fields.", {}),
    "op_schema": ("The exact JSON shape of one op (`akcli ops template`).",
                  {"type": "object", "properties": {"op": {"type": "string"}},
                   "required": ["op"]}),
    "pins": ("A symbol's pins: number, name, type, position (`akcli pins`).",
             {"type": "object", "properties": {"lib_id": {"type": "string"}},
              "required": ["lib_id"]}),
    "nets": ("The nets of the last successful draw, or of the task's starting sheet.", {}),
    "validate": ("Validate an op-list without drawing it.", OPLIST_ARG),
    "draw": ("Dry-run the draw the answer will get: errors, warnings and the net diff.",
             OPLIST_ARG),
    "submit": ("Submit the final op-list. This ends your turn.", OPLIST_ARG),
}


@dataclass
class ToolResult:
    status: str            # ok | invalid | denied | failed
    text: str              # what the model reads back (capped)
    submitted: bytes | None = None


def schemas(surface: str = "design") -> list[dict]:
    """The surface's tools as chat-completions `tools` entries."""
    return [{"type": "function", "function": {
        "name": name, "description": SPECS[name][0],
        "parameters": SPECS[name][1] or {"type": "object", "properties": {}}}}
        for name in SURFACES[surface]]


def parse_args(raw: str):
    """A tool call's arguments as the model wrote them: an object, or the ValueError that
    the toolbox answers as an invalid call."""
    from wirebench.verify.oplist import MAX_DEPTH, parse_json

    if not isinstance(raw, str):
        return ValueError(f"the arguments are {type(raw).__name__}, not JSON text")
    if not raw.strip():
        return {}
    # One level more than an op-list: {"oplist": {...}}.
    doc, problem = parse_json(raw, "arguments", max_depth=MAX_DEPTH + 1)
    return ValueError(problem) if problem else doc


def _cap(text: str) -> str:
    data = text.encode()
    if len(data) <= RESULT_CAP:
        return text
    return data[:RESULT_CAP].decode(errors="ignore") + f"\n[cut: {len(data)} bytes in all]"


class Toolbox:
    """One pair's tools. `scratch` lives inside the pair's folder and goes on close."""

    def __init__(self, task, symbols: list[str], pair_dir: Path,
                 timeout: float | None = None):
        self.task = task
        self.symbols = [str(Path(s).absolute()) for s in symbols]
        self.surface = task.meta.get("tool_surface", "design")
        # Swept with the pair's other scratch folders if the step is killed.
        self.scratch = scratch_dir(Path(pair_dir).absolute(), "tools")
        self.timeout = timeout
        self.last_draft: bytes | None = None  # the latest op-list validated or drawn
        self._drawn: Path | None = None
        self._calls = 0
        self._server = None  # the pair's confined child, forked on the first akcli call

    parse_args = staticmethod(parse_args)  # the loop reaches it through its toolbox

    @property
    def names(self) -> tuple[str, ...]:
        return SURFACES[self.surface]

    def schemas(self) -> list[dict]:
        return schemas(self.surface)

    @staticmethod
    def record(i: int, name: str, raw_args: str, result: ToolResult, started: float) -> dict:
        """One trajectory step as agent.json keeps it: the call as the model wrote it (the
        agent's own words, like ops.json, redacted with the rest of agent.json), the
        result's status, size and hash (what replay compares), and the latency."""
        data = raw_args.encode(errors="surrogatepass")  # a lone surrogate is the model's
        step = {"i": i, "tool": name, "args_bytes": len(data),
                "args_sha256": hashlib.sha256(data).hexdigest()[:16],
                "status": result.status, "result_bytes": len(result.text.encode()),
                "result_sha256": hashlib.sha256(result.text.encode()).hexdigest()[:16],
                "latency_s": round(time.monotonic() - started, 3)}
        if len(data) <= KEPT_ARGS:
            step["args"] = raw_args
        return step

    def close(self) -> None:
        if self._server is not None:
            self._server.close()
            self._server = None
        shutil.rmtree(self.scratch, ignore_errors=True)

    def call(self, name: str, args) -> ToolResult:
        if name not in SPECS:
            return ToolResult("invalid", f"unknown tool {name!r}; tools: {', '.join(self.names)}")
        if name not in self.names:
            return ToolResult("invalid", f"tool {name!r} is not on this task's "
                              f"{self.surface!r} surface ({', '.join(self.names)})")
        if isinstance(args, ValueError):
            return ToolResult("invalid", f"the arguments are not JSON: {args}")
        if not isinstance(args, dict):
            return ToolResult("invalid", "the arguments must be a JSON object")
        self._calls += 1
        call = self.scratch / f"{self._calls:03d}"
        call.mkdir(parents=True, exist_ok=True)
        try:
            result = getattr(self, f"_{name}")(args, call)
        except _Refused as exc:
            result = ToolResult(exc.status, str(exc))
        except Exception as exc:  # a tool that broke fails this call, not the pair
            result = ToolResult("failed", f"{name} failed: {type(exc).__name__}: {exc}")
        # The host's paths are nobody's business, and a replay elsewhere must read the same.
        text = result.text.replace(str(self.scratch), "<scratch>").replace(
            str(self.scratch.parent), "<pair>")
        return ToolResult(result.status, _cap(text), result.submitted)

    # -- inspect -----------------------------------------------------------------------
    def _list_ops(self, args, call) -> ToolResult:
        from wirebench.runtime import akcli_backend

        return ToolResult("ok", akcli_backend.ops_list_text())

    def _op_schema(self, args, call) -> ToolResult:
        from wirebench.runtime import akcli_backend

        op = args.get("op")
        known = [line.split()[0] for line in akcli_backend.ops_list_text().splitlines()
                 if line and not line.startswith("--")]
        if op not in known:  # a known name only: nothing the model writes reaches argv
            raise _Refused("invalid", f"unknown op {op!r}; see list_ops")
        return ToolResult("ok", akcli_backend.run("ops", "template", op, as_json=False).stdout)

    def _pins(self, args, call) -> ToolResult:
        lib_id = args.get("lib_id")
        libraries = {Path(s).stem: s for s in self.symbols}
        if not isinstance(lib_id, str) or ":" not in lib_id:
            raise _Refused("invalid", "lib_id must be LIBRARY:SYMBOL, such as Device:R")
        if lib_id.split(":", 1)[0] not in libraries:
            raise _Refused("denied", f"library {lib_id.split(':', 1)[0]!r} is not one this "
                           f"task draws with ({', '.join(sorted(libraries))})")
        out = call / "pins.json"
        doc = self._confined(
            "pins", _akcli_to, out, ["pins", lib_id, *_symbol_args(self.symbols)], out=out,
            give_up=lambda reason: write_json(out, {"schema": SCHEMA, "rc": 124,
                                                    "stdout": "", "stderr": reason}))
        if doc["rc"] != 0:
            return ToolResult("failed", doc["stderr"] or doc["stdout"])
        return ToolResult("ok", doc["stdout"])

    def _nets(self, args, call) -> ToolResult:
        from wirebench.steps.nets import extract, gave_up

        sheet = self._drawn
        if sheet is None:  # nothing drawn yet: the task's starting sheet
            draft = call / "ops.json"
            draft.write_text(json.dumps({"protocol_version": 2, "target_format": "kicad",
                                         "ops": []}))
            sheet = self._dry_run(draft, call)[1]
        out = call / "nets.json"
        doc = self._confined("nets", extract, sheet, out, out=out,
                             give_up=lambda reason: gave_up(sheet, out, f"nets {reason}"))
        if doc["errors"]:
            return ToolResult("failed", "; ".join(doc["errors"]))
        named = [{"name": n.get("name"), "members": n.get("members")} for n in doc["nets"]
                 if n.get("name") or len(n.get("members", [])) > 1]
        return ToolResult("ok", json.dumps({"nets": named}))

    # -- design ------------------------------------------------------------------------
    def _oplist(self, args, call) -> Path:
        from wirebench.verify.oplist import MAX_BYTES

        oplist = args.get("oplist")
        if isinstance(oplist, str):  # some models send the object as a JSON string
            from wirebench.verify.oplist import parse_json

            oplist, problem = parse_json(oplist)
            if problem:
                raise _Refused("invalid", f"oplist is a string that is not JSON: {problem}")
        if not isinstance(oplist, dict):
            raise _Refused("invalid", "oplist must be a JSON object")
        data = json.dumps(oplist).encode()
        if len(data) > MAX_BYTES:
            raise _Refused("invalid", f"oplist is {len(data)} bytes (at most {MAX_BYTES})")
        path = call / "ops.json"
        path.write_bytes(data)
        return path

    def _validate(self, args, call) -> ToolResult:
        from wirebench.steps.validate import validate

        ops = self._oplist(args, call)
        self.last_draft = ops.read_bytes()
        doc = validate(ops, call / "validate.json", timeout=self.timeout)
        return _verdict(doc, {"valid": doc["valid"], "errors": doc["errors"]})

    def _draw(self, args, call) -> ToolResult:
        ops = self._oplist(args, call)
        self.last_draft = ops.read_bytes()
        applied, sheet = self._dry_run(ops, call)
        if applied["applied"]:
            self._drawn = sheet
        return _verdict(applied, {"applied": applied["applied"], "errors": applied["errors"],
                                  "net_diff": applied.get("net_diff", [])})

    def _submit(self, args, call) -> ToolResult:
        ops = self._oplist(args, call)
        return ToolResult("ok", "submitted", submitted=ops.read_bytes())

    def _dry_run(self, ops: Path, call: Path) -> tuple[dict, Path]:
        """validate and apply, as the scored pair runs them, in the pair's confined child."""
        from wirebench.evidence.files import read_json

        sheet = call / "board.kicad_sch"

        def give_up(reason: str) -> None:
            write_json(call / "apply.json", {"schema": SCHEMA, "applied": False,
                                             "errors": [f"draw {reason}"]})
            write_json(call / "validate.json", {"schema": SCHEMA, "valid": True, "errors": []})

        self._confined("draw", _dry_run, ops, call, self.task, self.symbols, sheet,
                       out=call / "apply.json", give_up=give_up)
        verdict, applied = read_json(call / "validate.json"), read_json(call / "apply.json")
        if not verdict["valid"]:
            applied = {**applied, "errors": verdict["errors"] or applied["errors"]}
        return applied, sheet

    def _confined(self, step: str, fn, *args, out: Path, give_up) -> dict:
        """fn(*args) in the pair's confined child (runtime/confine.py's Server: one fork
        and one Landlock domain for all of the pair's calls), within the call's limit."""
        from wirebench.evidence.files import read_json
        from wirebench.runtime import akcli_backend, confine, symbol_cache
        from wirebench.steps.confined import DEFAULT_TIMEOUT_S

        if self._server is None:
            # Loaded here, once, so that the child starts with akcli imported and the
            # libraries parsed.
            akcli_backend.warm_up()
            symbol_cache.warm(self.symbols)
            self._server = confine.Server(write=self.scratch,
                                          read=[*self.symbols, *self.task.draw_inputs])
        timeout = DEFAULT_TIMEOUT_S if self.timeout is None else self.timeout
        try:
            self._server.call(fn, *args, timeout=timeout)
        except confine.StepTimedOut as exc:
            give_up(f"{step} {exc}")
        return read_json(out)


def _dry_run(ops: Path, call: Path, task, symbols: list[str], sheet: Path) -> None:
    from wirebench.steps.apply import apply
    from wirebench.steps.validate import validate

    validate(ops, call / "validate.json", confine=False)
    apply(ops, call / "validate.json", task, symbols, sheet, call / "apply.json",
          confine=False)


def _akcli_to(out: Path, argv: list[str]) -> None:
    """An akcli command, its output written to `out`."""
    from wirebench.runtime import akcli_backend

    res = akcli_backend.run(*argv, as_json=False)
    write_json(out, {"schema": SCHEMA, "rc": res.rc, "stdout": res.stdout,
                     "stderr": res.error_text(400)})


class _Refused(Exception):
    def __init__(self, status: str, message: str):
        super().__init__(message)
        self.status = status


def _verdict(doc: dict, shown: dict) -> ToolResult:
    """A step's document as a tool result: a path the guard refused is a denial, any
    other error the answer's own (an ok call: the tool did its job and said no)."""
    guard = [e for e in doc.get("errors", []) if "PATH_OUTSIDE_PAIR" in e]
    return ToolResult("denied" if guard else "ok", json.dumps(shown))


def _symbol_args(symbols: list[str]) -> list[str]:
    return [a for s in symbols for a in ("--symbols", s)]
