"""The simulate step: a design task's drawn sheet through its testbench, in ngspice, via
`akcli sim` (akcli builds the deck from the sheet; wirebench writes none).

sim.json records the deck's hash, the engine, every measure against its window, akcli's
findings and skipped parts, and, for a task with corners, every corner that ran and the
worst one. Whatever the answer drew, the step ends in one status with a reason:

  pass               every measure in its window, at nominal and at every corner
  fail               a measure outside its window (or not measurable) somewhere
  not_drawn          nothing landed to simulate
  interface_missing  a net the task names is not on the sheet
  needs_human        a part has no model (wirebench/data/part_models.yaml)
  error              akcli or ngspice could not simulate it: a value that does not
                     parse, no convergence, a timeout. The drawn circuit's failure.

Corners are a worst-case vertex analysis. Each toleranced part is nudged up alone to
learn which way it moves each measure; then, for each measure, one corner sets every
part to the end of its tolerance that pushes the measure up, and one to the end that
pushes it down, each at every temperature the task lists. A design right only at its
nominal values fails there, as it would on a bench.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from wirebench.corpus.testbench import compile_spec, describe_window, eng_value, private_nodes
from wirebench.evidence.files import read_json, scratch_dir, sha256_bytes, write_json
from wirebench.steps.common import input_hashes, versions
from wirebench.verify.oplist_guard import text_problems
from wirebench.verify.part_models import models_for

SCHEMA = "wirebench.sim/1"
DEFAULT_TIMEOUT_S = 20
def _deck_elements(deck: str) -> dict[str, str]:
    """{designator: value} of the R, C and L elements of akcli's deck."""
    found = {}
    for line in deck.splitlines():
        parts = line.split()
        if len(parts) >= 4 and parts[0][:1].upper() in "RCL" and not line.startswith("*"):
            found[parts[0]] = parts[3]
    return found


def _toleranced(deck: str, corners: dict) -> dict[str, float]:
    """{designator: nominal} of the parts the task's tolerances cover."""
    tolerance = corners.get("tolerance", {})
    parts = {}
    for ref, value in _deck_elements(deck).items():
        prefix = ref.rstrip("0123456789")
        number = eng_value(value)
        if prefix in tolerance and number is not None:
            parts[ref] = number
    return parts


class _Sim:
    """akcli sim on one sheet and spec, in a scratch folder, with the pair's timeout."""

    def __init__(self, sheet: Path, spec: Path, timeout_s: float):
        self.sheet, self.spec, self.timeout_s = sheet, spec, timeout_s

    def run(self, *sweeps: str, wave: Path | None = None) -> dict:
        from wirebench.runtime import akcli_backend

        argv = ["sim", str(self.sheet), "--sim", str(self.spec), "--exit-zero",
                "--timeout", str(self.timeout_s)]
        if wave is not None:
            argv += ["--wave", str(wave)]
        for sweep in sweeps:
            argv += ["--sweep", sweep]
        res = akcli_backend.run(*argv)
        doc = res.json()
        if doc is None or (res.rc != 0 and "error" in doc):
            return {"error": res.error_text().replace(str(self.sheet.parent), "<pair>")}
        return doc

    def deck(self) -> str:
        from wirebench.runtime import akcli_backend

        deck = self.sheet.parent / "deck.cir"
        res = akcli_backend.run("sim", str(self.sheet), "--sim", str(self.spec), "--deck-only",
                                "-o", str(deck), as_json=False)
        return deck.read_text(encoding="utf-8") if res.rc == 0 and deck.is_file() else ""


WAVE_POINTS = 240  # enough for a readable plot, few enough to keep sim.json small


def read_wave(path: Path) -> dict:
    """akcli's tidy waveform CSV, thinned to at most WAVE_POINTS rows, for the report."""
    import csv

    with open(path, newline="", encoding="utf-8") as fh:
        rows = list(csv.reader(fh))
    if len(rows) < 2:
        return {}
    head, body = rows[0], rows[1:]
    step = max(1, -(-len(body) // WAVE_POINTS))
    kept = body[::step] if body[-1] in body[::step] else [*body[::step], body[-1]]
    return {"x": head[0], "columns": {name: [float(r[i]) for r in kept]
                                      for i, name in enumerate(head)}}


def _failed(doc: dict, names: list[str]) -> set[str]:
    """Measures akcli found outside their window, or could not measure."""
    bad = set()
    for f in doc.get("findings", []):
        if f.get("severity") == "error":
            bad.update(r for r in f.get("refs", []) if r in names)
    return bad


def _engine_trouble(doc: dict) -> str | None:
    """A reason when the engine never produced measures: no convergence, a timeout, a
    value akcli could not read."""
    if "error" in doc:
        return doc["error"]
    names_failed = [f for f in doc.get("findings", []) if f.get("severity") == "error"
                    and f.get("code") not in ("SIM_ASSERT_FAIL", "SIM_MEAS_FAILED")]
    if names_failed:
        f = names_failed[0]
        return f"{f.get('code')}: {f.get('message')}"
    return None


def _corner_runs(sim: _Sim, nominal: dict, parts: dict[str, float], corners: dict,
                 names: list[str]) -> list[dict]:
    """Sensitivities, then the worst-case corners of each measure, each at every
    temperature. Returns every corner that ran, the sensitivity runs included."""
    tolerance = corners.get("tolerance", {})
    temps = [str(t) for t in corners.get("temperature", [])]
    temp_sweep = [f"temp={','.join(temps)}"] if temps else []

    def tol(ref):
        return float(tolerance[ref.rstrip("0123456789")])

    base = nominal.get("measured", {})
    direction: dict[str, dict[str, int]] = {n: {} for n in names}
    runs = []
    for ref, value in sorted(parts.items()):
        doc = sim.run(f"{ref}={value * (1 + tol(ref)):.6g}")
        # A run with --sweep reports its one corner under `corners`.
        up = (doc.get("corners") or [doc])[0].get("measured", {}) if "error" not in doc else {}
        for n in names:
            a, b = base.get(n), up.get(n)
            direction[n][ref] = 0 if a is None or b is None else (b > a) - (b < a)
    plans = []
    for n in names if parts else []:
        for sign in (1, -1):
            plan = tuple(sorted(
                (ref, parts[ref] * (1 + sign * (direction[n][ref] or 1) * tol(ref)))
                for ref in parts))
            if plan not in plans:
                plans.append(plan)
    if not parts and temps:  # the temperatures alone, once each
        plans.append(())
    for plan in plans:
        doc = sim.run(*(f"{ref}={value:.6g}" for ref, value in plan), *temp_sweep)
        if "error" in doc:
            runs.append({"params": {r: f"{v:.6g}" for r, v in plan}, "error": doc["error"],
                         "measured": {}, "failed": sorted(names)})
            continue
        for corner in doc.get("corners") or [doc]:
            params = corner.get("params") or {r: f"{v:.6g}" for r, v in plan}
            runs.append({"params": params, "measured": corner.get("measured", {}),
                         "failed": sorted(_failed(corner, names))})
    return runs


def simulate(sheet: Path, applied: Path, netlist: Path, task_dir, out: Path,
             timeout: float | None = None) -> dict:
    """The task's testbench on the drawn sheet, confined to the pair's folder."""
    from wirebench.corpus.tasks import as_task
    from wirebench.steps import confined

    task = as_task(task_dir)
    # Absolute, because the child works in the pair's folder.
    sheet, applied, netlist, out = (Path(p).absolute() for p in (sheet, applied, netlist, out))

    def give_up(reason: str) -> None:
        write_json(out, {**_blank(sheet, applied, netlist), "status": "error",
                         "reason": reason})

    return confined.run("simulate", lambda: _simulate(sheet, applied, netlist, task, out),
                        out=out, reads=[sheet, applied, netlist], timeout=timeout,
                        give_up=give_up)


def _blank(sheet: Path, applied: Path, netlist: Path) -> dict:
    from wirebench.runtime import akcli_backend

    return {"schema": SCHEMA, "inputs": input_hashes(sheet=sheet, apply=applied, nets=netlist),
            "versions": {**versions(), "ngspice": akcli_backend.ngspice_identity()},
            "status": None, "reason": "", "deck_sha256": None, "measures": [],
            "corners": [], "worst_corner": None, "findings": [], "parts_skipped": []}


def _simulate(sheet: Path, applied: Path, netlist: Path, task, out: Path) -> None:
    bench = task.testbench
    a, n = read_json(applied), read_json(netlist)
    result = _blank(sheet, applied, netlist)
    names = [m["name"] for m in bench["measures"]]
    drawn = a["applied"] and all(c["passed"] for c in a["postchecks"]) and not n["errors"]
    present = {net.get("name") for net in n.get("nets", [])}
    missing = [net for net in task.meta.get("interface", []) if net not in present]
    if not drawn:
        result.update(status="not_drawn", reason="nothing landed to simulate")
    elif missing:
        result.update(status="interface_missing",
                      reason=f"interface net(s) {missing} are not on the sheet")
    else:
        work = scratch_dir(Path(out).parent, "simulate")
        try:
            _run(result, bench, names, Path(sheet), work)
        finally:
            shutil.rmtree(work, ignore_errors=True)
    by_name = {m["name"]: m for m in bench["measures"]}
    for entry in result["measures"]:
        entry["window"] = describe_window(by_name[entry["name"]])
        entry["why"] = by_name[entry["name"]].get("why", "")
    write_json(out, result)


def _run(result: dict, bench: dict, names: list[str], sheet: Path, work: Path) -> None:
    """Simulate the drawn sheet (a copy in `work`) and fill `result` with the verdict."""
    import json

    from wirebench.runtime import akcli_backend

    comps = (akcli_backend.run("read", str(sheet)).json() or {}).get("components", [])
    # Validate refuses these in the op-list; here they are refused on the sheet itself,
    # however it was drawn: the deck is built from the sheet's text, and a part's Sim.*
    # fields would win over the task's models.
    untrusted = text_problems(comps, "$.components")
    if untrusted:
        result.update(status="error", reason=f"not simulated: {untrusted[0]}")
        return
    models, unmodeled = models_for(comps)
    if unmodeled:
        result.update(status="needs_human", reason="; ".join(unmodeled))
        return
    local = work / "board.kicad_sch"
    shutil.copy(sheet, local)
    spec = work / "spec.json"
    spec.write_text(json.dumps(compile_spec(bench, models), indent=1), encoding="utf-8")
    akcli_backend.use_ngspice()
    sim = _Sim(local, spec, float(bench.get("timeout_s", DEFAULT_TIMEOUT_S)))
    deck = sim.deck()
    # akcli names the sheet's path in the deck's title; the scratch folder's name is random,
    # so it is taken out of what is hashed: the same circuit, the same hash, every run.
    deck_text = deck.replace(str(work), "<pair>")
    result["deck_sha256"] = sha256_bytes(deck_text.encode()) if deck else None
    wave = work / "wave.csv" if bench.get("plot") else None
    nominal = sim.run(wave=wave)
    trouble = _engine_trouble(nominal)
    if wave is not None and wave.is_file():
        result["wave"] = read_wave(wave)
    ours = private_nodes(bench)
    result["findings"] = [f"{f.get('code')} ({f.get('severity')}): {f.get('message')}"
                          for f in nominal.get("findings", [])
                          if not any(f"'{p}'" in str(f.get("message")) for p in ours)]
    result["parts_skipped"] = nominal.get("parts_skipped", [])
    if trouble:
        result.update(status="error", reason=f"simulation failed: {trouble}")
        return
    failed = _failed(nominal, names)
    measured = nominal.get("measured", {})
    runs = []
    if bench.get("corners"):
        parts = _toleranced(deck, bench["corners"])
        runs = _corner_runs(sim, nominal, parts, bench["corners"], names)
    result["corners"] = runs
    at_corners = {name for run in runs for name in run["failed"]}
    if runs:
        worst = max(runs, key=lambda r: len(r["failed"]))
        result["worst_corner"] = worst if worst["failed"] else None
    for name in names:
        value = measured.get(name)
        corner_values = [r["measured"].get(name) for r in runs
                         if r["measured"].get(name) is not None]
        result["measures"].append({
            "name": name, "value": value,
            "min_over_corners": min(corner_values) if corner_values else None,
            "max_over_corners": max(corner_values) if corner_values else None,
            "ok_nominal": name not in failed, "ok_corners": name not in at_corners,
            "ok": name not in failed and name not in at_corners})
    bad = [m["name"] for m in result["measures"] if not m["ok"]]
    if bad:
        by_name = {m["name"]: m for m in bench["measures"]}
        where = []
        for m in result["measures"]:
            if not m["ok_nominal"]:
                window = describe_window(by_name[m["name"]])
                where.append(f"{m['name']} = {m['value']} at nominal, outside {window}")
            elif not m["ok_corners"]:
                # The failing corner farthest from nominal: the one a person should see.
                corner = max((r for r in runs if m["name"] in r["failed"]),
                             key=lambda r, m=m: abs((r["measured"].get(m["name"]) or 0)
                                                    - (m["value"] or 0)))
                at = ", ".join(f"{k}={v}" for k, v in sorted(corner["params"].items()))
                window = describe_window(by_name[m["name"]])
                where.append(f"{m['name']} = {corner['measured'].get(m['name'])} at the "
                             f"corner {at}, outside {window} (nominal {m['value']})")
        result.update(status="fail", reason="; ".join(where))
    else:
        result.update(status="pass", reason=f"{len(names)} measure(s) in their windows"
                      + (f" at {len(runs)} corner(s)" if runs else ""))
