"""A design task's testbench, compiled to akcli's own simulation spec.

task.yaml's `testbench` says what the outside world does to the circuit and what it must
measure; akcli builds the deck from the drawn sheet and runs ngspice (`akcli sim`). So
wirebench writes no deck of its own: it only turns the testbench's few conveniences
into akcli's spec (akcli/schemas/sim.schema.json):

  sources   a voltage source on an interface net; `resistance` puts it behind a source
            resistance (a Norton equivalent, since akcli's spec has no resistor element)
  loads     a resistance or a current from a net to ground (`to`: a resistance to
            another net instead, such as a chip's internal pull-up; `waveform`: a
            current that steps in a transient, `PULSE(0.5 2 3m 1u 1u 1m 10m)`)
  analyses  ngspice analyses, as akcli takes them
  measures  akcli asserts, each with a window: `min`/`max`, or `target` with `tol`
  corners   optional: relative tolerances by designator prefix, and temperatures
  plot      optional: real vectors of the last analysis (`vdb(VOUT)`, `v(VOUT)`) that
            sim.json keeps, thinned, for the report's plot
"""

from __future__ import annotations

import re

SPEC_VERSION = 1
ENG = {"f": 1e-15, "p": 1e-12, "n": 1e-9, "u": 1e-6, "m": 1e-3, "k": 1e3, "meg": 1e6,
       "g": 1e9, "t": 1e12}
_ENG_RX = re.compile(r"^(-?[0-9]*\.?[0-9]+(?:e[-+]?\d+)?)(meg|[fpnumkgt])?([0-9]*)$", re.I)


def eng_value(text: str) -> float | None:
    """`4.7k`, `4k7`, `100n`, `1meg`, `2.2e-6` as a number; None when it is not one."""
    m = _ENG_RX.match(str(text).strip().lower())
    if not m:
        return None
    mantissa, suffix, tail = m.groups()
    if tail and (not suffix or "." in mantissa):
        return None
    number = float(mantissa + ("." + tail if tail else ""))
    return number * ENG.get(suffix or "", 1.0)



def _number(text) -> str:
    """A value as akcli reads it: a plain number (akcli's parser takes no minus sign
    with an SI prefix, so `-1m` is written `-0.001`)."""
    number = eng_value(text)
    return repr(number) if number is not None else str(text).strip()


def window(measure: dict) -> dict:
    """The measure's window in akcli's terms (ge/le, or approx with tol)."""
    if "target" in measure:
        return {"approx": _number(measure["target"]), "tol": measure.get("tol", 0.05)}
    bounds = {}
    if "min" in measure:
        bounds["ge"] = _number(measure["min"])
    if "max" in measure:
        bounds["le"] = _number(measure["max"])
    return bounds


def describe_window(measure: dict) -> str:
    """The window as a person reads it: `1k ± 10%`, `>= 2.9`, `0.45 .. 0.55`."""
    if "target" in measure:
        return f"{measure['target']} ± {float(measure.get('tol', 0.05)) * 100:g}%"
    if "min" in measure and "max" in measure:
        return f"{measure['min']} .. {measure['max']}"
    return f">= {measure['min']}" if "min" in measure else f"<= {measure['max']}"


def stimuli(testbench: dict) -> list[dict]:
    out = []
    for src in testbench.get("sources", []):
        name, node = src["name"], src["node"]
        if "resistance" in src:
            # An ideal source on a private node, and a current of (v(private) - v(net))
            # / R from that node into the net: the source behind R, whose current the
            # ideal source supplies (so i(name) measures it).
            inner = f"{name}_INT"
            out.append({"name": name, "kind": "vsource", "node": inner, "value": src["value"]})
            out.append({"name": f"{name}_RS", "kind": "bsource", "node": inner, "node2": node,
                        "quantity": "I",
                        "expr": f"(v({inner})-v({node}))/{_number(src['resistance'])}"})
        else:
            out.append({"name": name, "kind": "vsource", "node": node,
                        "node2": src.get("node2", "0"), "value": src["value"]})
    for i, load in enumerate(testbench.get("loads", []), start=1):
        node, name = load["node"], load.get("name", f"LOAD{i}")
        if "resistance" in load:
            # A current of v/R from the net to the other end: a resistor, drawn as a
            # B-source because akcli's spec has no resistor element.
            other = load.get("to")
            drop = f"(v({node})-v({other}))" if other else f"v({node})"
            out.append({"name": name, "kind": "bsource", "node": node, "node2": other or "0",
                        "quantity": "I", "expr": f"{drop}/{_number(load['resistance'])}"})
        else:
            # `waveform` (PULSE(...), PWL(...)) moves the current in a transient from its DC
            # level: a load step.
            shape = f" {load['waveform']}" if load.get("waveform") else ""
            out.append({"name": name, "kind": "isource", "node": node, "node2": "0",
                        "value": f"DC {_number(load['current'])}{shape}"})
    return out


def private_nodes(testbench: dict) -> set[str]:
    """Nodes the testbench itself makes: akcli warns that they match no net."""
    return {f"{s['name']}_INT" for s in testbench.get("sources", []) if "resistance" in s}


def compile_spec(testbench: dict, models: dict) -> dict:
    """akcli's spec for this testbench, with the part models of the drawn sheet."""
    asserts = []
    for m in testbench["measures"]:
        entry = {"name": m["name"], "analysis": m["analysis"], **window(m)}
        entry["when" if "when" in m else "meas"] = m.get("when", m.get("meas"))
        asserts.append(entry)
    options = {"rshunt": "auto"}
    if testbench.get("plot"):
        options["wave_vectors"] = list(testbench["plot"])
    return {"protocol_version": SPEC_VERSION, "stimuli": stimuli(testbench),
            "analyses": dict(testbench["analyses"]), "models": models, "assert": asserts,
            "options": options}
