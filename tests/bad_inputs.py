"""The bad-input suite's cases: answers, agents and server replies that are wrong in every
way we could think of. Each must end as a verdict on its own pair (the outcome listed),
with the reason named, no traceback, no file outside the pair, and the run going on."""

from __future__ import annotations

import json
import os

from conftest import TASKS
from fake_openai import completion, error

TASK = "01-divider"
REFERENCE = json.loads((TASKS / TASK / "reference_ops.json").read_text())
ENVELOPE = {"protocol_version": 2, "target_format": "kicad"}


def _with(*ops, **envelope) -> bytes:
    return json.dumps({**ENVELOPE, **envelope, "ops": list(ops)}).encode()


def _ref(**changes) -> bytes:
    """The reference answer with its first place_component changed."""
    doc = json.loads(json.dumps(REFERENCE))
    place = next(op for op in doc["ops"] if op.get("op") == "place_component")
    place.update(changes)
    return json.dumps(doc).encode()


def _literal(literal: str, **at) -> bytes:
    """The reference answer with one field's value replaced by a raw JSON text, which
    json.dumps would never write (a 5,000-digit integer, 1e999, a nest): `at` names the
    field (`envelope` for a key of the envelope, else one of the first place_component)."""
    if "envelope" in at:
        doc = {**json.loads(json.dumps(REFERENCE)), at["envelope"]: "@@"}
        data = json.dumps(doc).encode()
    else:
        data = _ref(**{at["field"]: "@@"})
    assert data.count(b'"@@"') == 1
    return data.replace(b'"@@"', literal.encode())


R1 = {"op": "place_component", "lib_id": "Device:R", "designator": "R1", "x_mil": 1000,
      "y_mil": 1000, "value": "1k"}

# Limits the suite's config sets low, so that a case over them stays small.
MAX_OPLIST_BYTES = 200_000
MAX_OPS = 300

# name -> (answer bytes, expected outcome, a phrase the pair's errors must hold)
OPLISTS = {
    "empty": (b"", "invalid", "wrote no answer"),
    "whitespace": (b"  \n\t ", "invalid", "wrote no answer"),
    "prose": (b"I cannot do that, Dave.", "invalid", "unreadable op-list"),
    "array": (b"[1, 2, 3]", "invalid", "top level is list"),
    "string": (b'"ops"', "invalid", "top level is str"),
    "deep": (b'{"ops": ' + b"[" * 100_000, "invalid", "nested too deeply"),
    "deep-closed": (b'{"ops": ' + b"[" * 40 + b"]" * 40 + b"}", "invalid", "nested too deeply"),
    "not-utf8": (b'{"ops": ["\xff\xfe"]}', "invalid", "unreadable op-list"),
    "too-large": (_with(R1, padding="x" * MAX_OPLIST_BYTES), "invalid", "OPLIST_TOO_LARGE"),
    "too-many-ops": (_with(*[{**R1, "designator": f"R{i}", "x_mil": 1000 + 300 * i}
                             for i in range(1, MAX_OPS + 2)]), "invalid", "OPLIST_TOO_LARGE"),
    "protocol-1": (_with(R1, protocol_version=1), "invalid", "protocol"),
    "altium": (_with(target_format="altium"), "invalid", "altium"),
    "no-ops-key": (json.dumps(ENVELOPE).encode(), "invalid", "ops"),
    "ops-object": (json.dumps({**ENVELOPE, "ops": {}}).encode(), "invalid", "ops"),
    "unknown-op": (_with({"op": "summon_board"}), "invalid", "summon_board"),
    "op-not-object": (_with("place_component", 7), "invalid", "[0]"),
    "unknown-lib": (_ref(lib_id="Device:Flux_Capacitor"), "invalid", "Flux_Capacitor"),
    "nan-coordinate": (_ref(x_mil=float("nan")), "invalid", "NaN is not a JSON number"),
    # Issue 30, finding 7: JSON that Python cannot turn into a document, in every position.
    # Each is an unreadable verdict that names the problem and quotes the answer's start.
    "huge-integer": (_literal("9" * 5000, field="x_mil"), "invalid",
                     "an integer of 5000 digits"),
    "huge-integer-envelope": (_literal("2" + "0" * 5000, envelope="protocol_version"),
                              "invalid", "an integer of 5001 digits"),
    "huge-integer-in-list": (_literal("[1, -" + "7" * 4400 + "]", field="at"), "invalid",
                             "an integer of 4400 digits"),
    "huge-integer-bare": (b"9" * 5000, "invalid", "it begins b'99999"),
    "infinite-float": (_literal("1e999", field="y_mil"), "invalid", "reads as infinity"),
    "infinity-literal": (_literal("-Infinity", field="x_mil"), "invalid",
                         "-Infinity is not a JSON number"),
    "nan-key-value": (_literal("NaN", envelope="note"), "invalid", "NaN is not a JSON number"),
    "deep-in-op": (_literal("[" * 5000 + "]" * 5000, field="value"), "invalid",
                   "nested too deeply"),
    "deep-object-in-op": (_literal('{"a": ' * 40 + "1" + "}" * 40, field="value"), "invalid",
                          "nested too deeply"),
    "lone-surrogate": (_ref(value="1k\ud800"), "invalid", "lone surrogate"),
    "lone-surrogate-key": (_literal('{"\\udfff": 1}', envelope="note"), "invalid",
                           "lone surrogate"),
    "huge-coordinate": (_ref(x_mil=1e308), "invalid", "infinity"),
    "designator-number": (_ref(designator=5), "invalid", "designator"),
    # akcli draws it (the value is text to KiCad): no crash anywhere is the point.
    # A control character reaches the sheet and the simulator's deck: refused by name.
    "nul-in-value": (_ref(value="1k\u0000"), "invalid", "CONTROL_CHARACTER"),
    "absolute-sheet": (_with({"op": "add_sheet", "name": "x", "file": "/etc/x.kicad_sch",
                              "create": True, "at": [1000, 1000], "size": [1000, 1000]}),
                       "invalid", "PATH_OUTSIDE_PAIR"),
    "climbing-symbols": (_ref(symbol_source="../../../../tasks/01-divider/reference_ops.json"),
                         "invalid", "PATH_OUTSIDE_PAIR"),
    "run-id-escape": (json.dumps({**REFERENCE, "run_id": "/tmp/wirebench-pwned"}).encode(),
                      "invalid", "run_id"),
    "refusal-malformed": (json.dumps({"refusal": "no"}).encode(), "invalid",
                          "REFUSAL_MALFORMED"),
    "refusal-unexpected": (json.dumps({"refusal": {"kind": "stop-condition",
                                                   "reason": "I'd rather not"}}).encode(),
                           "stop-condition", "expected success"),
}

# name -> (shell command, expected outcome, a phrase the pair's errors must hold)
COMMANDS = {
    "binary-garbage": ("head -c 3000 /dev/urandom > \"$OPS_OUT\"", "invalid", ""),
    "deep-answer": ("printf '{\"ops\": ' > \"$OPS_OUT\"; head -c 200000 /dev/zero | "
                    "tr '\\0' '[' >> \"$OPS_OUT\"", "invalid", ""),
    "silent": ("true", "invalid", "wrote nothing to OPS_OUT"),
    "stdout-flood": ("head -c 5000000 /dev/zero", "invalid", "max_output_bytes"),
    "file-flood": ("for i in $(seq 30); do head -c 100000 /dev/zero > f$i; done; "
                   "echo '{}' > \"$OPS_OUT\"", "invalid", "max_output_bytes"),
    "symlink-answer": ("ln -s /etc/passwd \"$OPS_OUT\"", "invalid", "unreadable"),
    # Issue 30, finding 10: only exit 75 (EX_TEMPFAIL) declares an infra failure; any
    # other end of a command is the model's failure, scored, with its reason.
    "killed": ("kill -9 $$", "invalid", "agent failed (exit 137"),
    "exit-3": ("echo 'cannot solve this one' >&2; exit 3", "invalid", "cannot solve this one"),
    "exit-1-with-answer": (f"echo '{json.dumps(REFERENCE)}' > \"$OPS_OUT\"; exit 1", "invalid",
                           "agent failed (exit 1"),
    # Run by root, the command is nobody and its launcher stays root: the kill is refused.
    "kills-launcher": ("kill -9 $PPID", "invalid",
                       "agent failed (exit" if os.geteuid() == 0 else "without a report"),
    "timeout": ("sleep 60", "invalid", "timed out after 2 s"),
    "tempfail": ("echo 'provider down' >&2; exit 75", "infra_error",
                 "declared an infra failure (exit 75, EX_TEMPFAIL): provider down"),
    "huge-integer": ("printf '{\"ops\": [' > \"$OPS_OUT\"; head -c 5000 /dev/zero | "
                     "tr '\\0' 9 >> \"$OPS_OUT\"; printf ']}' >> \"$OPS_OUT\"", "invalid",
                     "an integer of 5000 digits"),
    "orphans": ("sleep 300 & setsid sleep 301 & echo '{\"ops\": []}' > \"$OPS_OUT\"",
                "invalid", ""),
}


# The few command cases that need their own entry fields.
COMMAND_ENTRY = {"timeout": {"timeout": 2}}


def _body(**fields):
    return (200, {}, {"id": "x", "object": "chat.completion", "created": 0, "model": "fake",
                      **fields})


# name -> (the server's reply, expected outcome, a phrase the pair's errors must hold).
# What the model wrote, however malformed, is the model's failure; a reply that is not a
# chat completion at all is the server's (infra_error, out of the pass rates).
SERVER_REPLIES = {
    "content-null": (completion(None), "invalid", "no text"),
    "content-list": (completion([{"type": "text", "text": "hi"}]), "invalid", "not text"),
    "only-braces": (completion("{" * 150_000), "invalid", "unreadable op-list"),
    "deep-json": (completion('{"ops": ' + "[" * 50_000 + "]" * 50_000 + "}"), "invalid",
                  "nested too deeply"),
    "huge-integer": (completion("Here it is:\n```json\n"
                                + _literal("9" * 5000, field="x_mil").decode() + "\n```"),
                     "invalid", "an integer of 5000 digits"),
    "nan-in-reply": (completion(_literal("NaN", field="y_mil").decode()), "invalid",
                     "NaN is not a JSON number"),
    "lone-surrogate": (completion('{"ops": [{"op": "place_\ud800"}]}'), "invalid",
                       "lone surrogate"),
    "negative-usage": (completion(json.dumps(REFERENCE), prompt_tokens=-5), "success", ""),
    "no-choices": (_body(choices=[]), "invalid", "no text"),
    "not-json": ((200, {"Content-Type": "application/json"}, b"<html>oops</html>"),
                 "infra_error", "not a chat completion"),
    "html-502": ((502, {"Content-Type": "text/html"}, b"<html>Bad gateway</html>"),
                 "infra_error", "HTTP 502"),
    "no-message": (_body(choices=[{"index": 0, "finish_reason": "stop"}]), "infra_error",
                   "not a chat completion"),
    "error-200": ((200, {}, error(500, "boom")[2]), "infra_error", "not a chat completion"),
}
