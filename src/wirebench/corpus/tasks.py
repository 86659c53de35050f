"""A task: one small schematic design request with its ground truth.

A task is a directory `tasks/<nn>-<slug>/` holding
  task.md               the prompt the agent gets
  expected_nets.json    {"nets": [{"name": "VOUT", "members": ["R1.2", ...]}]}
  reference_ops.json    a known-good akcli op-list
and optionally
  task.yaml             metadata (id, family, brief, ...)
  postcheck_arrange.json  `akcli arrange --groups --apply` flags run after the draw
  base_ops.json         an existing design drawn first: the agent's op-list edits it

The bare three-file layout is exactly akcli's own tools/agent_eval format, so such a
directory runs unchanged. The directory name is the task's id in results paths.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path

PLANNED = "planned"  # tasks/planned/ holds tasks that are written but not run
DATASHEETS = "datasheets"  # tasks/datasheets/<symbol>.md: our notes on a real part
FULL_DATASHEETS = "full"  # tasks/datasheets/full/<symbol>.md: a whole datasheet, our own
# Tiers judged by design rules on the drawn netlist: a board, and its spec variant (the
# same board stated as requirements, with full datasheets instead of the notes).
RULE_TIERS = ("board", "spec")
# A spec task names its main ICs and leaves the small parts to the agent, as a real
# requirement does: its pack shows these parts' pin tables whether or not the text names
# them, so that a part the requirements call for (a crystal) is not drawn from memory, and
# a table's presence tells nothing.
COMMON_PARTS = ("Device:R", "Device:C", "Device:C_Polarized", "Device:L", "Device:LED",
                "Device:D", "Device:D_Schottky", "Device:D_Zener", "Device:D_TVS",
                "Device:Crystal", "Device:Fuse", "Device:Polyfuse", "Device:FerriteBead")
# A library's nickname may hold `-` and `.` as well (the coldfire kit's
# `kit-coldfire_schlib`): a lib_id the pattern missed got no pin table in the prompt pack.
LIB_ID = re.compile(r"`([A-Za-z][A-Za-z0-9_.-]*:[A-Za-z0-9_+.-]+)`")
ARRANGE_FLAGS = ("group_gap", "page_width", "row_width", "margin")
OUTCOMES = ("success", "blocked", "human-review-required", "stop-condition")
NETS_EXACT = {"id": "nets", "kind": "nets_exact"}
SIMULATION = {"id": "sim", "kind": "simulation"}
LAYOUT_CLEAN = {"id": "layout", "kind": "layout_clean"}
ERC_CLEAN = {"id": "erc", "kind": "erc_clean"}
NO_ATTACK = {"id": "attack", "kind": "no_attack"}


class TaskError(Exception):
    """A task directory that cannot be used, with a message that names the file."""


@dataclass(frozen=True)
class Task:
    id: str
    path: Path
    meta: dict = field(default_factory=dict)

    @property
    def prompt_path(self) -> Path:
        return self.path / "task.md"

    @property
    def expected_path(self) -> Path:
        return self.path / "expected_nets.json"

    @property
    def reference_path(self) -> Path:
        return self.path / "reference_ops.json"

    def reference_ops(self) -> bytes:
        """The reference answer. akcli's own corpus still ships protocol 1 envelopes, which
        akcli refuses since it moved to protocol 2; in a folder of akcli's format (only
        there) such an envelope is restamped with akcli's protocol, so that corpus runs as
        shipped. Anything else comes back byte for byte."""
        raw = self.reference_path.read_bytes()
        if not self.akcli_format:
            return raw
        from akcli.ops import PROTOCOL_VERSION

        try:
            doc = json.loads(raw)
        except ValueError:
            return raw  # unreadable: scored as such
        if not isinstance(doc, dict) or doc.get("protocol_version") != 1 or PROTOCOL_VERSION == 1:
            return raw
        return json.dumps({**doc, "protocol_version": PROTOCOL_VERSION}, indent=2).encode()

    @property
    def base_ops_path(self) -> Path | None:
        path = self.path / self.meta.get("base_ops", "base_ops.json")
        return path if path.is_file() else None

    @property
    def expected_outcomes(self) -> list[str]:
        value = self.meta.get("expected_outcome", "success")
        return [value] if isinstance(value, str) else list(value)

    @property
    def testbench(self) -> dict | None:
        """A design task's testbench (corpus/testbench.py), or None."""
        return self.meta.get("testbench")

    @property
    def tier(self) -> str:
        return self.meta.get("tier", "design" if self.testbench else "transcription")

    @property
    def akcli_format(self) -> bool:
        """A folder as akcli's own harness ships it: no task.yaml, so no contract of ours."""
        return not (self.path / "task.yaml").is_file()

    @property
    def functional(self) -> bool:
        """Judged by what the circuit does or must obey (a testbench, design rules), not
        by a ground-truth netlist: the agent chose the topology and the net names."""
        return self.testbench is not None or self.tier in RULE_TIERS

    @property
    def strict_nets(self) -> bool:
        """Is the answer drawn behind akcli's `--strict-nets` rails (the default)? A task
        whose answer must move a pin between named nets says `strict_nets: false`."""
        return self.meta.get("strict_nets", True) is not False

    @property
    def symbol_files(self) -> list[Path]:
        """Symbol libraries the task carries in its own folder (task.yaml `symbol_files`):
        a real-tier task draws with its demo's symbols (taskgen/real)."""
        return [self.path / name for name in self.meta.get("symbol_files", [])]

    @property
    def libraries(self) -> list[str]:
        """KiCad symbol libraries the task draws with, by name (corpus/libraries.py);
        empty for a task that uses the run's own `symbols`."""
        return list(self.meta.get("libraries", []))

    @property
    def criteria(self) -> list[dict]:
        """The task's criteria. A task that expects success is always held to its nets, or,
        when it has a testbench, to what its simulation measures (the agent chose the
        topology and the net names, so its nets are not compared with a ground truth),
        and to a sheet with no overlapping symbols, labels or pins (`layout_clean`)."""
        listed = list(self.meta.get("criteria", []))
        kinds = {c["kind"] for c in listed}
        # An injection task holds every answer, drawn or not, to ignoring the injection.
        if self.meta.get("attack") and "no_attack" not in kinds:
            listed.append(dict(NO_ATTACK))
        if "success" not in self.expected_outcomes:
            return listed
        if self.testbench is not None:
            if "simulation" not in kinds:
                listed.insert(0, dict(SIMULATION))
        elif not self.functional and not kinds & {"nets_exact", "nets_kept"}:
            listed.insert(0, dict(NETS_EXACT))
        # A board is reviewed as KiCad's own ERC would: every pin connected or marked.
        if self.tier in RULE_TIERS and "erc_clean" not in kinds:
            listed.append(dict(ERC_CLEAN))
        # A sheet is for people too: every drawn answer is held to a readable layout,
        # unless the task says why it cannot be (layout_exempt). A task in akcli's own
        # format is scored by akcli's own rule, its nets alone, so it runs unchanged.
        if ("layout_clean" not in kinds and not self.meta.get("layout_exempt")
                and not self.akcli_format):
            listed.append(dict(LAYOUT_CLEAN))
        return listed

    def draw_meta_hash(self) -> str:
        """A hash of what the apply step reads of task.yaml: the base design's name, the
        post-checks and the criteria kinds whose facts it gathers."""
        import hashlib
        import json

        kinds = sorted({c["kind"] for c in self.criteria})
        doc = {k: self.meta.get(k) for k in ("base_ops", "postchecks")}
        if "strict_nets" in self.meta:  # only then: every other task keeps its hash
            doc["strict_nets"] = self.meta["strict_nets"]
        return hashlib.sha256(json.dumps({**doc, "kinds": kinds}, sort_keys=True)
                              .encode()).hexdigest()[:16]

    def named_lib_ids(self) -> list[str]:
        """lib_ids the prompt (in backquotes) and the base design name, in first-seen
        order: the prompt pack shows their pin tables and datasheet notes."""
        text = self.prompt_path.read_text(encoding="utf-8")
        if self.base_ops_path:
            text += "\n" + " ".join(f"`{m}`" for m in re.findall(
                r'"lib_id":\s*"([^"]+)"', self.base_ops_path.read_text(encoding="utf-8")))
        return list(dict.fromkeys(LIB_ID.findall(text)))

    def shown_lib_ids(self) -> list[str]:
        """lib_ids whose pin tables the agent is given: those named, and for a spec task
        the common small parts as well."""
        named = self.named_lib_ids()
        return list(dict.fromkeys([*named, *COMMON_PARTS])) if self.full_datasheets else named

    @property
    def datasheet_paths(self) -> list[Path]:
        """Our datasheets on the parts the task names, from the corpus's shared
        datasheets/ folder (one file per symbol name, such as STM32F030F4Px.md): the
        notes for the schematic, or for a spec task the full write-ups in datasheets/full/
        and never the notes, which list what its rules check."""
        folder = self.path.parent / DATASHEETS
        if self.full_datasheets:
            folder = folder / FULL_DATASHEETS
        paths = (folder / f"{lib_id.split(':', 1)[1]}.md" for lib_id in self.named_lib_ids())
        return [p for p in paths if p.is_file()]

    @property
    def full_datasheets(self) -> bool:
        """Does the agent get whole datasheets (a spec task) rather than our notes?"""
        return self.tier == "spec"

    @property
    def variant_of(self) -> str | None:
        """The id of the task this one restates (a spec task's board), or None."""
        return self.meta.get("variant_of")

    @property
    def arrange_path(self) -> Path:
        return self.path / "postcheck_arrange.json"

    @property
    def draw_inputs(self) -> list[Path]:
        """The task's own files a draw reads: the base design and the post-check's flags.
        A confined apply step may read these and nothing else of the task's folder."""
        return [p for p in (self.base_ops_path, self.arrange_path) if p and p.is_file()]

    def expected_nets(self) -> dict[str, frozenset[str]]:
        # A task that expects the agent to stop may have no circuit at all, and a design
        # or board task has none to compare with: its simulation or its rules judge it.
        if self.functional and not self.expected_path.is_file():
            return {}
        return load_expected(self.expected_path,
                             allow_empty="success" not in self.expected_outcomes)

    def postcheck_arrange(self) -> dict | None:
        """The arrange post-check's flags, or None when the task declares none. It comes
        from akcli's postcheck_arrange.json or from task.yaml's `postchecks`."""
        for check in self.meta.get("postchecks", []):
            if check["kind"] == "arrange":
                return {k: v for k, v in check.items() if k != "kind"}
        if not self.arrange_path.is_file():
            return None
        params = _read_json(self.arrange_path)
        if not isinstance(params, dict):
            raise TaskError(f"{self.arrange_path}: must be a JSON object of arrange flags")
        unknown = sorted(set(params) - set(ARRANGE_FLAGS))
        if unknown:
            raise TaskError(f"{self.arrange_path}: unknown key(s) {unknown}; "
                            f"allowed: {list(ARRANGE_FLAGS)}")
        for key, value in params.items():
            if not isinstance(value, int) or isinstance(value, bool) or value < 0:
                raise TaskError(f"{self.arrange_path}: {key} must be a non-negative integer (mil)")
        return params


def _read_json(path: Path):
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise TaskError(f"{path}: missing") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise TaskError(f"{path}: not valid JSON ({exc})") from None


def load_expected(path: Path, allow_empty: bool = False) -> dict[str, frozenset[str]]:
    """Ground truth as {net name: members}; refuses anything ambiguous."""
    doc = _read_json(Path(path))
    nets = doc.get("nets") if isinstance(doc, dict) else None
    if not isinstance(nets, list) or not (nets or allow_empty):
        raise TaskError(f"{path}: needs a non-empty 'nets' list")
    expected: dict[str, frozenset[str]] = {}
    for i, net in enumerate(nets):
        name = net.get("name") if isinstance(net, dict) else None
        members = net.get("members") if isinstance(net, dict) else None
        if not isinstance(name, str) or not name:
            raise TaskError(f"{path}: nets[{i}] needs a non-empty 'name'")
        if name in expected:
            raise TaskError(f"{path}: net {name!r} is listed twice")
        if not isinstance(members, list) or not members:
            raise TaskError(f"{path}: net {name!r} needs a non-empty 'members' list")
        for m in members:
            if not isinstance(m, str) or m.count(".") != 1 or m.startswith("#"):
                raise TaskError(
                    f"{path}: net {name!r} member {m!r} must be 'REF.PIN' of a real part"
                    " (power-symbol pins such as #PWR01.1 are never members)"
                )
        expected[name] = frozenset(members)
    return expected


def load_task(path: str | Path) -> Task:
    # Absolute: a confined step works in its pair's folder, not where the run started.
    path = Path(path).absolute()
    if not (path / "task.md").is_file():
        raise TaskError(f"{path}: not a task (no task.md)")
    meta: dict = {}
    meta_path = path / "task.yaml"
    if meta_path.is_file():
        import yaml  # lazy: only tasks that carry metadata pay for it

        # libyaml's loader when PyYAML has it (its wheels do): 0.2 ms a task.yaml against
        # 2 ms, paid by every step and, for each task, by every workflow start.
        loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
        try:
            meta = yaml.load(meta_path.read_text(encoding="utf-8"), Loader=loader) or {}
        except yaml.YAMLError as exc:
            raise TaskError(f"{meta_path}: not valid YAML ({exc})") from None
        _check_meta(meta, meta_path)
    return Task(id=path.name, path=path, meta=meta)


def as_task(task: str | Path | Task) -> Task:
    """A task folder loaded, or a Task passed through: one pass loads its task once."""
    return task if isinstance(task, Task) else load_task(task)


def _check_meta(meta, meta_path: Path) -> None:
    from wirebench.config import schema_problems

    if not isinstance(meta, dict):
        raise TaskError(f"{meta_path}: must be a mapping")
    problems = schema_problems("task", meta)
    if problems:
        raise TaskError("\n".join(f"{meta_path}: {p}" for p in problems))
    ids = [c["id"] for c in meta.get("criteria", [])]
    dupes = sorted({i for i in ids if ids.count(i) > 1})
    if dupes:
        raise TaskError(f"{meta_path}: duplicate criterion id(s) {dupes}")
    # ngspice keeps a measure's result as a vector of that name in its analysis's plot,
    # which shadows the net of that name there: a later measure of that analysis reading
    # `v(COMP)` reads a measure named `comp`, and fails. (Another analysis's plot is apart.)
    measures = (meta.get("testbench") or {}).get("measures", [])
    for i, m in enumerate(measures):
        later = " ".join(f"{n.get('meas', '')} {n.get('when', '')}" for n in measures[i + 1:]
                         if n.get("analysis") == m.get("analysis"))
        if re.search(rf"\(\s*{re.escape(m['name'])}\s*[,)]", later, re.I):
            raise TaskError(f"{meta_path}: testbench measure {m['name']!r} shadows the net "
                            "of that name, which a later measure reads; rename the measure")


def discover_all(tasks_dirs: list) -> dict[str, Path]:
    """Every task of these folders by id, sorted by id: a run's tasks folder and the
    tiers generated beside it (the real tier, taskgen/real/tier.py). An id two folders
    hold is an error: its pairs would overwrite each other."""
    found: dict[str, Path] = {}
    for root in tasks_dirs:
        for d in discover(root):
            if d.name in found:
                raise TaskError(f"task id {d.name!r} is in both {found[d.name].parent} and "
                                f"{root}")
            found[d.name] = d
    return dict(sorted(found.items()))


def task_folder(tasks_dirs, task: str) -> Path:
    """A task's folder: in the first of these folders (or this one) that holds it."""
    dirs = [tasks_dirs] if isinstance(tasks_dirs, str | Path) else list(tasks_dirs)
    return next((Path(d) / task for d in dirs if (Path(d) / task).is_dir()),
                Path(dirs[0]) / task)


def discover(tasks_dir: str | Path) -> list[Path]:
    """Task directories under tasks_dir, sorted; planned/ and hidden folders are skipped."""
    root = Path(tasks_dir)
    if not root.is_dir():
        raise TaskError(f"tasks dir not found: {root}")
    return sorted(
        d for d in root.iterdir()
        if d.is_dir() and d.name != PLANNED and not d.name.startswith(".")
        and (d / "task.md").is_file()
    )
