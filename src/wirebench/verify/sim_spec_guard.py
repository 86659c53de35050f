"""An agent's own test bench (the `simulate` tool's akcli sim spec) is untrusted input:
nothing it writes may reach the simulator as text of its choosing.

akcli turns a spec into ngspice input two ways, and both are text: its stimuli, model
cards and `.option`/analysis cards are lines of the deck, and each analysis and each
assertion is sent to ngspice as an interactive command (`tran 1u 1m`, `meas ac f3db WHEN
vdb(VOUT)=-3`). A line break adds deck lines (a `.control` block that runs `shell`); a
free-text analysis or measure is a command of the agent's choosing; `options.extra_cards`
and a `models` card are SPICE of its own, `.include` of any file among it. So a spec is
checked against an allow-list, not a deny-list:

  top level   protocol_version, stimuli, analyses, assert, options, models,
              acknowledged_unmodeled; nothing else
  stimuli     name (an identifier), kind (vsource, isource, bsource), node and node2 (a
              net name), and: value, a source from a small grammar (a number; DC, AC;
              PULSE, SIN, EXP, PWL, SFFM, AM of numbers), or for a bsource, quantity (I, V)
              and expr, arithmetic over numbers, v(NODE[,NODE]) and i(SOURCE)
  analyses    op, dc, ac, tran, each with its own argument grammar (numbers, a swept
              source's name, dec/oct/lin, uic)
  assert      name (an identifier), analysis, meas or when (a measure: ngspice's measure
              keywords, v(..)/vdb(..)/vp(..)/vm(..)/i(..) of nodes, `=`, numbers), and
              numeric bounds
  options     rshunt only (a boolean, a number or `auto`)
  models      only entries equal to the harness's own (data/part_models.yaml); the harness
              puts its models in whatever the spec says
  every string, as in an op-list, one line of printable text (verify/oplist_guard.py)

Each problem is named with its JSON path. The guarantee behind it is the kernel's: the
tool's akcli runs confined to the pair's scratch folder, without sockets.
"""

from __future__ import annotations

import re

from wirebench.verify.oplist_guard import DESIGNATOR, text_problems

TOP_KEYS = ("protocol_version", "stimuli", "analyses", "assert", "options", "models",
            "acknowledged_unmodeled")
STIMULUS_KEYS = ("name", "kind", "node", "node2", "value", "quantity", "expr")
ASSERT_KEYS = ("name", "analysis", "meas", "when", "gt", "ge", "lt", "le", "approx", "tol")
BOUND_KEYS = ("gt", "ge", "lt", "le", "approx", "tol")
ANALYSES = ("op", "dc", "ac", "tran")
MAX_STIMULI, MAX_ASSERTS, MAX_TEXT = 32, 64, 240

IDENT = re.compile(r"[A-Za-z][A-Za-z0-9_]{0,31}\Z")
# A net name as a stimulus names it: akcli matches it to a net, or makes a node of it
# with every other character replaced, so this only keeps it to one readable token.
NET = re.compile(r"[A-Za-z0-9_+\-./~()]{1,100}\Z")
# 5, -0.5, 1.6k, 4k7, 100n, 1meg, 2.2e-6, 10mV, 1kHz: a number as ngspice reads one.
_NUM = (r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?(?:meg|mil|[fpnumkgtFPNUMKGT])?\d*"
        r"(?:v|a|s|hz|ohm)?")
NUM = re.compile(_NUM + r"\Z", re.I)
_NODE = r"[A-Za-z0-9_]+"
# A vector of an analysis: a node voltage (or a difference), in dB, phase, magnitude,
# real or imaginary part, or the current through a source.
_VECTOR = rf"(?:vdb|vph|vp|vm|vr|vi|v|i)\(\s*{_NODE}\s*(?:,\s*{_NODE}\s*)?\)"
_SOURCE_FUNCS = ("pulse", "sin", "exp", "pwl", "sffm", "am")
MEASURE_WORDS = ("trig", "targ", "when", "find", "avg", "min", "max", "pp", "rms",
                 "min_at", "max_at", "integ", "integral", "deriv", "derivative", "last")
MEASURE_KEYS = ("at", "from", "to", "val", "rise", "fall", "cross", "td")


def _tokens(text: str, pattern: re.Pattern) -> list[tuple[str, str]] | str:
    """(kind, text) tokens of `text`, or the first piece no token matches."""
    out, pos = [], 0
    while pos < len(text):
        m = pattern.match(text, pos)
        if not m or m.end() == pos:
            return text[pos:pos + 20]
        if m.lastgroup != "space":
            out.append((m.lastgroup, m[0]))
        pos = m.end()
    return out


_SOURCE_TOKENS = re.compile(
    rf"(?P<space>\s+)|(?P<func>(?:{'|'.join(_SOURCE_FUNCS)})(?=\s*\())|(?P<word>dc|ac)(?![\w.])"
    rf"|(?P<num>{_NUM})(?![\w.])|(?P<open>\()|(?P<close>\))|(?P<comma>,)", re.I)
_EXPR_TOKENS = re.compile(
    rf"(?P<space>\s+)|(?P<vector>{_VECTOR})|(?P<num>{_NUM})(?![\w.])|(?P<op>[-+*/])"
    r"|(?P<open>\()|(?P<close>\))", re.I)
_MEASURE_TOKENS = re.compile(
    rf"(?P<space>\s+)|(?P<vector>{_VECTOR})"
    rf"|(?P<key>(?:{'|'.join(MEASURE_KEYS)})\s*=\s*(?:{_NUM}|last)(?![\w.]))"
    rf"|(?P<word>(?:{'|'.join(sorted(MEASURE_WORDS, key=len, reverse=True))})(?![\w.]))"
    rf"|(?P<num>{_NUM})(?![\w.])|(?P<eq>=)", re.I)
_ANALYSIS_TOKENS = re.compile(
    rf"(?P<space>\s+)|(?P<num>{_NUM})(?![\w.])|(?P<name>[A-Za-z][A-Za-z0-9_]*)", re.I)


def _grammar(where: str, text: str, what: str, piece: str) -> str:
    return (f"SIM_SPEC_GRAMMAR: {where} = {text!r}: {piece!r} is not part of {what}; "
            "a test bench is built from the tool's grammar only (see the tool's "
            "description), never free SPICE text")


def _source_value(where: str, text: str) -> list[str]:
    toks = _tokens(text, _SOURCE_TOKENS)
    what = "a source value (a number; DC n; AC n [phase]; PULSE/SIN/EXP/PWL/SFFM/AM(n ...))"
    if isinstance(toks, str):
        return [_grammar(where, text, what, toks)]
    depth, expect_num = 0, False
    for i, (kind, tok) in enumerate(toks):
        bad = (kind == "open" and (i == 0 or toks[i - 1][0] != "func")) or \
              (kind == "close" and depth == 0) or \
              (depth and kind not in ("num", "comma", "close")) or \
              (expect_num and kind != "num") or (kind == "comma" and not depth)
        if bad:
            return [_grammar(where, text, what, tok)]
        depth += (kind == "open") - (kind == "close")
        expect_num = kind == "word"
        if kind == "func" and (i + 1 == len(toks) or toks[i + 1][0] != "open"):
            return [_grammar(where, text, what, tok)]
    if depth or expect_num:
        return [_grammar(where, text, what, "an unfinished source")]
    return []


def _expression(where: str, text: str) -> list[str]:
    toks = _tokens(text, _EXPR_TOKENS)
    what = "an expression (numbers, v(NODE), v(A,B), i(SOURCE), + - * / and parentheses)"
    if isinstance(toks, str):
        return [_grammar(where, text, what, toks)]
    depth = 0
    for _, tok in toks:
        depth += (tok == "(") - (tok == ")")
        if depth < 0:
            return [_grammar(where, text, what, tok)]
    return [] if depth == 0 and toks else [_grammar(where, text, what, "unbalanced")]


def _measure(where: str, text: str) -> list[str]:
    toks = _tokens(text, _MEASURE_TOKENS)
    what = ("a measure (" + ", ".join(w.upper() for w in MEASURE_WORDS[:-1])
            + "; v()/vdb()/vp()/vm()/i() of nodes; KEY=number for "
            + ", ".join(k.upper() for k in MEASURE_KEYS) + "; '='; numbers)")
    if isinstance(toks, str):
        return [_grammar(where, text, what, toks)]
    return [] if toks else [_grammar(where, text, what, "nothing")]


def _analysis(where: str, name: str, text: str, sources: set[str]) -> list[str]:
    toks = _tokens(text.strip(), _ANALYSIS_TOKENS)
    shapes = {"op": "nothing", "tran": "TSTEP TSTOP [TSTART [TMAX]] [uic]",
              "ac": "dec|oct|lin POINTS FSTART FSTOP",
              "dc": "SOURCE START STOP STEP [SOURCE2 START STOP STEP]"}
    what = f"a {name} analysis ({shapes[name]})"
    if isinstance(toks, str):
        return [_grammar(where, text, what, toks)]
    if toks and toks[0][1].lower() == name:  # akcli takes "tran 1u 1m" as "1u 1m"
        toks = toks[1:]
    kinds = [k for k, _ in toks]
    words = [t.lower() for _, t in toks]
    if name == "op":
        ok = not toks
    elif name == "tran":
        if words and words[-1] == "uic":
            kinds = kinds[:-1]
        ok = 2 <= len(kinds) <= 4 and all(k == "num" for k in kinds)
    elif name == "ac":
        ok = len(toks) == 4 and words[0] in ("dec", "oct", "lin") and \
            all(k == "num" for k in kinds[1:])
    else:
        ok = len(toks) in (4, 8) and all(
            kinds[i] == "name" and all(k == "num" for k in kinds[i + 1:i + 4])
            for i in range(0, len(toks), 4))
        unknown = [words[i] for i in range(0, len(toks), 4)
                   if ok and words[i] not in sources and words[i] != "temp"]
        if unknown:
            return [f"SIM_SPEC_GRAMMAR: {where} = {text!r}: a dc sweep names one of the "
                    f"spec's stimuli (or temp), not {unknown[0]!r}"]
    return [] if ok else [_grammar(where, text, what, text)]


def _bound(where: str, value) -> list[str]:
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        return [f"SIM_SPEC_GRAMMAR: {where}: a bound is a number"]
    if isinstance(value, str) and not NUM.match(value.strip()):
        return [_grammar(where, value, "a number", value)]
    return []


def _stimulus(where: str, stim, names: set[str]) -> list[str]:
    if not isinstance(stim, dict):
        return [f"SIM_SPEC_GRAMMAR: {where}: a stimulus is an object"]
    found = [f"SIM_SPEC_KEY: {where}.{k}: a stimulus holds only {', '.join(STIMULUS_KEYS)}"
             for k in stim if k not in STIMULUS_KEYS]
    name, kind = stim.get("name"), stim.get("kind")
    if not (isinstance(name, str) and IDENT.match(name)):
        found.append(f"SIM_SPEC_GRAMMAR: {where}.name = {name!r}: an identifier "
                     "(a letter, then letters, digits or '_')")
    elif name.lower() in names:
        found.append(f"SIM_SPEC_GRAMMAR: {where}.name = {name!r}: used twice")
    else:
        # akcli names the element with its letter first (VS for a vsource VS, VSUP for
        # SUP), and a dc sweep names that element.
        letter = {"vsource": "v", "isource": "i", "bsource": "b"}.get(kind, "")
        names.update({name.lower(), name.lower() if name.lower().startswith(letter)
                      else letter + name.lower()})
    for key in ("node", "node2"):
        node = stim.get(key)
        if key in stim and not (isinstance(node, str) and NET.match(node)):
            found.append(f"SIM_SPEC_GRAMMAR: {where}.{key} = {node!r}: a net name "
                         "(letters, digits and _ + - . / ~ ( ))")
    if kind in ("vsource", "isource"):
        found += [f"SIM_SPEC_KEY: {where}.{k}: only a bsource has {k}"
                  for k in ("quantity", "expr") if k in stim]
        value = stim.get("value", "")
        found += _source_value(f"{where}.value", value) if isinstance(value, str) else [
            f"SIM_SPEC_GRAMMAR: {where}.value: a source value is text, such as 'DC 5'"]
    elif kind == "bsource":
        if stim.get("quantity", "I") not in ("I", "V"):
            found.append(f"SIM_SPEC_GRAMMAR: {where}.quantity: I or V")
        if "value" in stim:
            found.append(f"SIM_SPEC_KEY: {where}.value: a bsource has expr, not value")
        expr = stim.get("expr")
        found += _expression(f"{where}.expr", expr) if isinstance(expr, str) else [
            f"SIM_SPEC_GRAMMAR: {where}.expr: a bsource needs expr, such as 'v(VOUT)/10k'"]
    else:
        found.append(f"SIM_SPEC_GRAMMAR: {where}.kind = {kind!r}: vsource, isource or bsource")
    return found


def _assert(where: str, item, analyses: set[str]) -> list[str]:
    if not isinstance(item, dict):
        return [f"SIM_SPEC_GRAMMAR: {where}: an assertion is an object"]
    found = [f"SIM_SPEC_KEY: {where}.{k}: an assertion holds only {', '.join(ASSERT_KEYS)}"
             for k in item if k not in ASSERT_KEYS]
    name = item.get("name")
    if not (isinstance(name, str) and IDENT.match(name)) or \
            str(name).lower() in (*MEASURE_WORDS, *MEASURE_KEYS):
        found.append(f"SIM_SPEC_GRAMMAR: {where}.name = {name!r}: an identifier that is "
                     "no measure keyword")
    if "analysis" in item and item["analysis"] not in analyses:
        found.append(f"SIM_SPEC_GRAMMAR: {where}.analysis = {item['analysis']!r}: one of "
                     f"the spec's analyses ({', '.join(sorted(analyses)) or 'none'})")
    texts = [k for k in ("meas", "when") if k in item]
    if len(texts) != 1:
        found.append(f"SIM_SPEC_GRAMMAR: {where}: an assertion has meas or when (one)")
    for key in texts:
        text = item[key]
        found += _measure(f"{where}.{key}", text) if isinstance(text, str) else [
            f"SIM_SPEC_GRAMMAR: {where}.{key}: a measure is text"]
    for key in BOUND_KEYS:
        if key in item:
            found += _bound(f"{where}.{key}", item[key])
    return found


def _models(where: str, models, allowed: dict) -> list[str]:
    if not isinstance(models, dict):
        return [f"SIM_MODEL_REFUSED: {where}: models is an object"]
    return [f"SIM_MODEL_REFUSED: {where}.{key}: a part's model is the harness's "
            "(wirebench/data/part_models.yaml), given to every part already; an entry "
            "may only repeat it"
            for key, entry in models.items() if allowed.get(key) != entry]


def problems(spec: object, allowed_models: dict | None = None) -> list[str]:
    """Everything the simulate tool refuses in an agent's spec, each with its JSON path.
    `allowed_models`: {designator or lib_id: the harness's models entry} on this sheet."""
    if not isinstance(spec, dict):
        return ["SIM_SPEC_GRAMMAR: $: the spec is a JSON object (akcli's sim spec)"]
    # A models entry is refused unless it repeats the harness's own, whose cards are
    # multi-line SPICE: the text rule is for everything else.
    found = [p for p in text_problems({k: v for k, v in spec.items() if k != "models"})
             if not p.startswith("BAD_DESIGNATOR")]
    found += [f"SIM_SPEC_KEY: $.{k}: a spec holds only {', '.join(TOP_KEYS)}"
              for k in spec if k not in TOP_KEYS]
    if spec.get("protocol_version", 1) != 1:
        found.append("SIM_SPEC_GRAMMAR: $.protocol_version: 1")
    stimuli = spec.get("stimuli", [])
    names: set[str] = set()
    if not isinstance(stimuli, list) or len(stimuli) > MAX_STIMULI:
        found.append(f"SIM_SPEC_GRAMMAR: $.stimuli: a list of at most {MAX_STIMULI}")
    else:
        for i, stim in enumerate(stimuli):
            found += _stimulus(f"$.stimuli[{i}]", stim, names)
    analyses = spec.get("analyses", {})
    if not isinstance(analyses, dict):
        found.append("SIM_SPEC_GRAMMAR: $.analyses: an object {analysis: arguments}")
        analyses = {}
    for name, text in analyses.items():
        where = f"$.analyses.{name}"
        if name not in ANALYSES:
            found.append(f"SIM_SPEC_KEY: {where}: the analyses are {', '.join(ANALYSES)}")
        elif not isinstance(text, str) or len(text) > MAX_TEXT:
            found.append(f"SIM_SPEC_GRAMMAR: {where}: the arguments are text")
        else:
            found += _analysis(where, name, text, names)
    asserts = spec.get("assert", [])
    if not isinstance(asserts, list) or len(asserts) > MAX_ASSERTS:
        found.append(f"SIM_SPEC_GRAMMAR: $.assert: a list of at most {MAX_ASSERTS}")
    else:
        for i, item in enumerate(asserts):
            found += _assert(f"$.assert[{i}]", item, set(analyses) & set(ANALYSES))
    options = spec.get("options", {})
    if not isinstance(options, dict):
        found.append("SIM_SPEC_GRAMMAR: $.options: an object")
    else:
        found += [f"SIM_SPEC_KEY: $.options.{k}: the one option is rshunt"
                  for k in options if k != "rshunt"]
        rshunt = options.get("rshunt", "auto")
        if not (isinstance(rshunt, bool) or rshunt == "auto" or not _bound("", rshunt)):
            found.append(f"SIM_SPEC_GRAMMAR: $.options.rshunt = {rshunt!r}: true, false, "
                         "'auto' or a number")
    if "models" in spec:
        found += _models("$.models", spec["models"], allowed_models or {})
    acks = spec.get("acknowledged_unmodeled", [])
    if not isinstance(acks, list) or not all(
            isinstance(a, str) and DESIGNATOR.match(a) for a in acks):
        found.append("SIM_SPEC_GRAMMAR: $.acknowledged_unmodeled: a list of designators")
    too_long = [p for p in _strings(spec, "$") if len(p[1]) > MAX_TEXT]
    found += [f"SIM_SPEC_GRAMMAR: {where}: at most {MAX_TEXT} characters"
              for where, _ in too_long if not where.startswith("$.models")]
    return found


def _strings(doc, where: str):
    if isinstance(doc, dict):
        for k, v in doc.items():
            yield from _strings(v, f"{where}.{k}")
    elif isinstance(doc, list):
        for i, v in enumerate(doc):
            yield from _strings(v, f"{where}[{i}]")
    elif isinstance(doc, str):
        yield where, doc
