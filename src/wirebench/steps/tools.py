"""The tools an agent drives akcli with, bound to one pair: the same validate, draw and
nets the scored pair runs, on a scratch sheet in the pair's own folder.

  list_ops            akcli's op vocabulary                         (inspect)
  op_schema(op)       one op's exact field shape                    (inspect)
  pins(lib_id)        a symbol's pin table, configured libraries only (inspect)
  nets()              the netlist of the sheet                       (inspect)
  query(net|pin|component)  akcli's answer for one net (`akcli net NAME`), one pin
                      (`akcli net --why`) or one part (`akcli component`) (inspect)
  check(kind)         the sheet's ERC, layout and integrity findings, less the ones the
                      scorer waives (verify/criteria.kept_findings)  (inspect)
  render()            the sheet as a PNG (`akcli render`, runtime/raster.py) for an
                      entry with `vision: true`; otherwise a line saying it is not
                      available                                      (inspect)
  validate(oplist)    `akcli ops validate` + the path guard          (design)
  draw(oplist)        a dry run of the scored draw: a fresh sheet, the task's base
                      design, the op-list behind --strict-nets; the net diff and errors
  simulate(spec)      `akcli sim` of the last draw with the agent's own test bench
                      (never the task's), checked by verify/sim_spec_guard.py (design)
  submit(oplist)      the answer; it ends the loop                   (design)

"The sheet" is the last successful draw, or before any, the task's starting sheet.

A task may name its surface (`tool_surface: inspect | design`, or a list of tool names;
default design). A call to a tool that does not exist or is not on the surface is refused
before it runs (`invalid`); a call the path guard, the spec guard or the library list
refuses is a `denied`; a valid call whose tool then fails is a `failed`. Every akcli call
runs confined to the pair's folder (steps/confined.py), as the scored steps do, so nothing
an argument says can read or write outside it. What goes back to the model is capped at
RESULT_CAP bytes; a picture goes beside the text (ToolResult.image).
"""

from __future__ import annotations

import hashlib
import json
import re
import shutil
import time
from dataclasses import dataclass
from pathlib import Path

from wirebench.evidence.files import scratch_dir, write_json
from wirebench.verify.oplist_guard import DESIGNATOR, text_problems

SCHEMA = "wirebench.tool/1"
RESULT_CAP = 8 * 1024
# A step's arguments are kept in the trajectory, so that `wirebench replay` can run the
# calls again; an argument past this size is kept as its hash only (not replayable).
KEPT_ARGS = 256 * 1024
INSPECT = ("list_ops", "op_schema", "pins", "nets", "query", "check", "render")
DESIGN = (*INSPECT, "validate", "draw", "simulate", "submit")
SURFACES = {"inspect": INSPECT, "design": DESIGN}
CHECK_KINDS = {"erc": ("erc_clean", "--erc"), "layout": ("layout_clean", "--layout"),
               "integrity": ("integrity", "--integrity")}
# A pin as akcli names it (REF.NUMBER), and a part: one plain token each, so that nothing
# the model writes is read by akcli as an option.
PIN = re.compile(r"[A-Za-z#][A-Za-z0-9_#+-]*\.[A-Za-z0-9_+~-]{1,16}\Z")
SIM_SPEC_HELP = (
    "akcli's sim spec (akcli/schemas/sim.schema.json) for the last draw: {\"protocol_version\""
    ": 1, \"stimuli\": [...], \"analyses\": {...}, \"assert\": [...]}. Your own test "
    "bench, built from a grammar (nothing else is accepted): a stimulus is {name, kind: "
    "vsource|isource, node, node2 (default ground), value} with value a number, 'DC n', "
    "'AC n', or PULSE/SIN/EXP/PWL/SFFM/AM(n ...); or {name, kind: bsource, node, node2, "
    "quantity: I|V, expr} with expr arithmetic of numbers, v(NODE), v(A,B), i(SOURCE) (a "
    "load of 10k from VOUT to ground: expr 'v(VOUT)/10k'). A node may be a new one (a "
    "source behind a resistance). analyses: op, dc ('SOURCE START STOP STEP', the "
    "source in lower case as akcli names it: 'vs'), ac ('dec 50 10 1meg'), tran ('1u "
    "10m'). An assert is {name, analysis, meas or when, and a bound: gt|ge|lt|le|approx "
    "(+tol)}; meas/when use ngspice's measure words (FIND vdb(VOUT) AT=10, WHEN "
    "vdb(VOUT)=-3, MAX v(OUT) FROM=1m TO=2m, TRIG ... TARG ...). Nodes are net names "
    "as akcli writes them in the deck: letters, digits, '_'. Part models are the "
    "harness's; `options` takes rshunt only.")
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
    "query": ("akcli's answer for one piece of the sheet (the last draw, or the starting "
              "sheet before any): a net by name (its members), a pin REF.NUMBER (its net "
              "and why it is or is not connected: `akcli net --why`), or a component by "
              "designator (its value, position and pin nets). Give exactly one.",
              {"type": "object", "properties": {
                  "net": {"type": "string"}, "pin": {"type": "string"},
                  "component": {"type": "string"}}}),
    "check": ("akcli's ERC, layout and integrity findings on the sheet (warnings and "
              "errors), less the ones the scorer waives: what a criterion on them judges.",
              {"type": "object", "properties": {"kind": {
                  "type": "string", "enum": ["all", *CHECK_KINDS]}}}),
    "render": ("The sheet as a picture (akcli render), for models that take images.", {}),
    "simulate": ("Simulate the last draw with your own test bench (akcli sim, ngspice): "
                 "the measures and akcli's findings come back.",
                 {"type": "object", "properties": {"spec": {
                     "type": "object", "description": SIM_SPEC_HELP}},
                  "required": ["spec"]}),
}


@dataclass
class ToolResult:
    status: str            # ok | invalid | denied | failed
    text: str              # what the model reads back (capped)
    submitted: bytes | None = None
    image: bytes | None = None  # a PNG the model is shown (render)


def surface_tools(surface) -> tuple[str, ...]:
    """A task's `tool_surface`: a named set, or a list of tool names (in DESIGN's order)."""
    if isinstance(surface, str):
        return SURFACES[surface]
    return tuple(name for name in DESIGN if name in set(surface))


def schemas(surface="design") -> list[dict]:
    """The surface's tools as chat-completions `tools` entries."""
    return [{"type": "function", "function": {
        "name": name, "description": SPECS[name][0],
        "parameters": SPECS[name][1] or {"type": "object", "properties": {}}}}
        for name in surface_tools(surface)]


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
                 timeout: float | None = None, vision: bool = False):
        self.task = task
        self.symbols = [str(Path(s).absolute()) for s in symbols]
        self.surface = task.meta.get("tool_surface", "design")
        # Whether render's picture reaches the model (an openai entry's `vision: true`;
        # an MCP client always gets it, and decides).
        self.vision = vision
        # Swept with the pair's other scratch folders if the step is killed.
        self.scratch = scratch_dir(Path(pair_dir).absolute(), "tools")
        self.timeout = timeout
        self.last_draft: bytes | None = None  # the latest op-list validated or drawn
        self._drawn: Path | None = None
        self._base: Path | None = None  # the starting sheet, drawn on first need
        self._calls = 0
        self._server = None  # the pair's confined child, forked on the first akcli call

    parse_args = staticmethod(parse_args)  # the loop reaches it through its toolbox

    @property
    def names(self) -> tuple[str, ...]:
        return surface_tools(self.surface)

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
        if result.image is not None:  # the model was shown a picture (replay: vision on)
            step["image_bytes"] = len(result.image)
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
                              f"surface ({', '.join(self.names)})")
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
        return ToolResult(result.status, _cap(text), result.submitted, result.image)

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

    def _sheet(self, call: Path) -> Path:
        """The sheet the inspect tools read: the last successful draw, or before any, the
        task's starting sheet (its base design, or a blank sheet), drawn once."""
        if self._drawn is not None:
            return self._drawn
        if self._base is None:
            draft = call / "ops.json"
            draft.write_text(json.dumps({"protocol_version": 2, "target_format": "kicad",
                                         "ops": []}))
            self._base = self._dry_run(draft, call)[1]
        return self._base

    def _nets(self, args, call) -> ToolResult:
        from wirebench.steps.nets import extract, gave_up

        sheet = self._sheet(call)
        out = call / "nets.json"
        doc = self._confined("nets", extract, sheet, out, out=out,
                             give_up=lambda reason: gave_up(sheet, out, f"nets {reason}"))
        if doc["errors"]:
            return ToolResult("failed", "; ".join(doc["errors"]))
        named = [{"name": n.get("name"), "members": n.get("members")} for n in doc["nets"]
                 if n.get("name") or len(n.get("members", [])) > 1]
        return ToolResult("ok", json.dumps({"nets": named}))

    def _query(self, args, call) -> ToolResult:
        asked = {k: args[k] for k in ("net", "pin", "component") if args.get(k) is not None}
        if len(asked) != 1 or set(args) - {"net", "pin", "component"}:
            raise _Refused("invalid", "give exactly one of net, pin or component")
        (kind, value), = asked.items()
        if not isinstance(value, str) or not value or len(value) > 200 or \
                text_problems(value):
            raise _Refused("invalid", f"{kind} must be one line of text")
        sheet = self._sheet(call)
        if kind == "net":  # after `--`: a net named like an option is still a name
            argv = ["net", str(sheet), "--", value]
        elif kind == "pin":
            if not PIN.match(value):
                raise _Refused("invalid", f"pin {value!r} must be REF.NUMBER, such as U1.3")
            argv = ["net", str(sheet), "--why", value]
        else:
            if not DESIGNATOR.match(value):
                raise _Refused("invalid", f"component {value!r} must be a designator")
            argv = ["component", str(sheet), value]
        out = call / "query.json"
        doc = self._confined("query", _akcli_to, out, argv, True, out=out,
                             give_up=lambda reason: write_json(out, {
                                 "schema": SCHEMA, "rc": 124, "stdout": "", "stderr": reason}))
        if doc["rc"] != 0:
            return ToolResult("failed", doc["stderr"] or doc["stdout"])
        return ToolResult("ok", _compact(doc["stdout"]))

    def _check(self, args, call) -> ToolResult:
        from wirebench.verify.criteria import kept_findings
        from wirebench.verify.design_rules import Board

        kind = args.get("kind", "all")
        if kind != "all" and kind not in CHECK_KINDS:
            raise _Refused("invalid", f"kind is all or one of {', '.join(CHECK_KINDS)}")
        kinds = list(CHECK_KINDS) if kind == "all" else [kind]
        sheet = self._sheet(call)
        out = call / "check.json"
        doc = self._confined("check", _check_to, sheet, [CHECK_KINDS[k][0] for k in kinds],
                             out, out=out, give_up=lambda reason: write_json(
                                 out, {"schema": SCHEMA, "error": reason}))
        if doc.get("error"):
            return ToolResult("failed", doc["error"])
        board = Board.from_docs(doc["nets"], doc["facts"]["board"])
        # The task's own waivers where it has a criterion of that kind (the scorer's).
        criteria = {c["kind"]: c for c in self.task.criteria}
        shown = {}
        for k in kinds:
            criterion = criteria.get(CHECK_KINDS[k][0], {"kind": CHECK_KINDS[k][0]})
            found = doc["facts"][CHECK_KINDS[k][0]]
            kept = kept_findings(criterion, found, board)
            shown[k] = {"findings": kept, "waived": len(found) - len(kept)}
        return ToolResult("ok", json.dumps(shown))

    def _render(self, args, call) -> ToolResult:
        if not self.vision:
            return ToolResult("ok", "render is not available: this model takes no images "
                              "(its entry has no `vision: true`); read the sheet with "
                              "nets, query and check")
        sheet = self._sheet(call)
        out = call / "render.json"
        doc = self._confined("render", _render_to, sheet, call, out, out=out,
                             give_up=lambda reason: write_json(out, {"schema": SCHEMA,
                                                                     "error": reason}))
        if doc.get("error"):
            return ToolResult("failed", doc["error"])
        png = (call / "board.png").read_bytes()
        return ToolResult("ok", f"the sheet as a {doc['width']}x{doc['height']} PNG "
                          f"(akcli render, svg sha256 {doc['svg_sha256'][:16]}); the "
                          "picture follows", image=png)

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

    def _simulate(self, args, call) -> ToolResult:
        from wirebench.verify.oplist import MAX_BYTES, parse_json

        spec = args.get("spec")
        if isinstance(spec, str):  # some models send the object as a JSON string
            spec, problem = parse_json(spec, "spec")
            if problem:
                raise _Refused("invalid", f"spec is a string that is not JSON: {problem}")
        if not isinstance(spec, dict):
            raise _Refused("invalid", "spec must be a JSON object (akcli's sim spec)")
        if len(json.dumps(spec).encode()) > MAX_BYTES:
            raise _Refused("invalid", f"spec is over {MAX_BYTES} bytes")
        if self._drawn is None:
            raise _Refused("invalid", "nothing drawn yet: simulate runs on the last "
                           "successful draw")
        from wirebench.steps.confined import DEFAULT_TIMEOUT_S
        from wirebench.steps.simulate import DEFAULT_TIMEOUT_S as SIM_TIMEOUT_S

        limit = DEFAULT_TIMEOUT_S if self.timeout is None else self.timeout
        out = call / "sim.json"
        doc = self._confined("simulate", _simulate_to, self._drawn, spec, call,
                             max(1.0, min(SIM_TIMEOUT_S, limit - 1)), out=out,
                             give_up=lambda reason: write_json(out, {"schema": SCHEMA,
                                                                     "error": reason}))
        if doc.get("refused"):
            return ToolResult("denied", "; ".join(doc["refused"]))
        if doc.get("error"):
            return ToolResult("failed", doc["error"])
        return ToolResult("ok", json.dumps(doc["result"]))

    def _submit(self, args, call) -> ToolResult:
        ops = self._oplist(args, call)
        return ToolResult("ok", "submitted", submitted=ops.read_bytes())

    def _dry_run(self, ops: Path, call: Path) -> tuple[dict, Path]:
        """validate and apply, as the scored pair runs them, in the pair's confined child."""
        from wirebench.evidence.files import read_json

        sheet = call / "board.kicad_sch"

        def give_up(reason: str) -> None:
            write_json(call / "apply.json", {"schema": SCHEMA, "applied": False,
                                             "errors": [reason]})  # "draw exceeded N s"
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


def _check_to(sheet: Path, kinds: list[str], out: Path) -> None:
    """The sheet's findings for the criterion kinds, as the apply step gathers them for
    the scorer (its `_sheet_facts`), with the parts and nets a waiver is matched on."""
    from types import SimpleNamespace

    from wirebench.runtime import akcli_backend
    from wirebench.steps.apply import _sheet_facts

    # A design-rule kind asks for the parts' facts (the waivers match on them) without
    # an ERC run of its own.
    asked = SimpleNamespace(criteria=[{"kind": k} for k in ("connected", *kinds)])
    facts = _sheet_facts(asked, sheet)
    nets = akcli_backend.nets(sheet).json() or {}
    write_json(out, {"schema": SCHEMA, "facts": {k: facts.get(k, []) for k in kinds}
                     | {"board": facts["board"]}, "nets": {"nets": nets.get("nets", [])}})


def _render_to(sheet: Path, call: Path, out: Path) -> None:
    from wirebench.evidence.files import sha256_bytes
    from wirebench.runtime import akcli_backend, raster

    svg = call / "board.svg"
    res = akcli_backend.run("render", str(sheet), "-o", str(svg))
    if res.rc != 0 or not svg.is_file():
        write_json(out, {"schema": SCHEMA, "error": f"akcli render: {res.error_text(300)}"})
        return
    data = svg.read_bytes()
    try:
        width, height = raster.svg_to_png(data, str(call / "board.png"))
    except (raster.Unavailable, ValueError, OSError) as exc:
        write_json(out, {"schema": SCHEMA, "error": f"render: {exc}"})
        return
    write_json(out, {"schema": SCHEMA, "width": width, "height": height,
                     "svg_sha256": sha256_bytes(data)})


def _simulate_to(sheet: Path, spec: dict, call: Path, timeout_s: float) -> None:
    """The agent's spec, guarded, with the harness's part models, through `akcli sim`."""
    from wirebench.runtime import akcli_backend
    from wirebench.verify import sim_spec_guard
    from wirebench.verify.part_models import models_for

    out = call / "sim.json"
    comps = (akcli_backend.run("read", str(sheet)).json() or {}).get("components", [])
    # As the simulate step does: the deck is built from the sheet's text too.
    refused = text_problems(comps, "$.components")
    models, unmodeled = models_for(comps)
    by_lib: dict[str, list] = {}
    for c in comps:
        if c.get("designator") in models:
            by_lib.setdefault(c.get("library_ref"), []).append(models[c["designator"]])
    allowed = {**models, **{lib: cards[0] for lib, cards in by_lib.items()
                            if all(card == cards[0] for card in cards)}}
    refused += sim_spec_guard.problems(spec, allowed)
    if refused:
        write_json(out, {"schema": SCHEMA, "refused": refused})
        return
    spec_path = call / "spec.json"
    spec_path.write_text(json.dumps({"protocol_version": 1, **spec, "models": models}),
                         encoding="utf-8")
    akcli_backend.use_ngspice()
    res = akcli_backend.run("sim", str(sheet), "--sim", str(spec_path), "--exit-zero",
                            "--timeout", f"{timeout_s:g}")
    doc = res.json()
    if doc is None or (res.rc != 0 and "error" in doc):
        write_json(out, {"schema": SCHEMA, "error": f"akcli sim: {res.error_text(600)}"})
        return
    result = {"ok": doc.get("ok"), "measured": doc.get("measured", {}),
              "findings": [f"{f.get('code')} ({f.get('severity')}): {f.get('message')}"
                           for f in doc.get("findings", [])],
              "parts_skipped": doc.get("parts_skipped", [])}
    if unmodeled:
        result["unmodeled"] = unmodeled
    write_json(out, {"schema": SCHEMA, "result": result})


def _compact(text: str) -> str:
    """akcli's indented JSON on one line, without the sheet's path and the schema's
    version: the same answer in a third of the bytes."""
    try:
        doc = json.loads(text)
    except ValueError:
        return text
    if isinstance(doc, dict):
        doc = {k: v for k, v in doc.items() if k not in ("source", "schema_version")}
    return json.dumps(doc)


def _akcli_to(out: Path, argv: list[str], as_json: bool = False) -> None:
    """An akcli command, its output written to `out`."""
    from wirebench.runtime import akcli_backend

    res = akcli_backend.run(*argv, as_json=as_json)
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
