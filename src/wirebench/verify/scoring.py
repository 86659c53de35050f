"""Score the nets that landed against a task's ground truth.

The rule is akcli's own harness rule: only NAMED nets count, each compared by exact pin
membership; score = round(matched / expected, 4); a pass needs every expected net matched
and no extra named net. Unnamed nets are ignored, unless the task's nets_exact says
`unnamed: true` (the real tier, whose base names every net of two pins or more): then an
unnamed net of two real pins or more is a net the task does not have, and fails. A real
tier's change request is held instead to its base's nets (`compare_kept`): what it adds is
the agent's to name, and its rules judge it.

One deliberate difference: pins of power symbols (designators starting with '#', such as
#PWR01.1) are dropped before comparing. A GND port on the right pin is the same circuit as
a GND label there, so it must not fail; a net left with no real pin at all (a port on
nothing) is dropped too. A power port that names a rail the task does not have still shows
up as an extra named net, or as a wrong member, and fails.
"""

from __future__ import annotations


def is_real_pin(member: str) -> bool:
    return not member.startswith("#")


def observed_named_nets(nets_doc: dict) -> dict[str, frozenset[str]]:
    """{name: real members} from `akcli nets --json`; one name on two nets is merged."""
    observed: dict[str, set[str]] = {}
    for net in nets_doc.get("nets", []):
        name = net.get("name")
        members = {m for m in net.get("members", []) if is_real_pin(m)}
        if name and members:
            observed.setdefault(name, set()).update(members)
    return {name: frozenset(m) for name, m in observed.items()}


def observed_unnamed_nets(nets_doc: dict) -> list[frozenset[str]]:
    """The real members of each unnamed net that joins two real pins or more."""
    out = []
    for net in nets_doc.get("nets", []):
        members = frozenset(m for m in net.get("members", []) if is_real_pin(m))
        if not net.get("name") and len(members) > 1:
            out.append(members)
    return sorted(out, key=sorted)


def compare(expected: dict[str, frozenset[str]], observed: dict[str, frozenset[str]],
            unnamed: list[frozenset[str]] = ()) -> dict:
    """Exact comparison of named nets: matched count, extras and one line per mismatch.
    `unnamed`: the unnamed nets of a task that compares them, each a mismatch."""
    matched = sum(1 for name, members in expected.items() if observed.get(name) == members)
    extras = sorted(set(observed) - set(expected))
    mismatches = []
    for name in sorted(expected):
        want, got = expected[name], observed.get(name)
        if got is None:
            mismatches.append(f"net {name!r}: missing (expected {sorted(want)})")
        elif got != want:
            parts = []
            if want - got:
                parts.append(f"missing {sorted(want - got)}")
            if got - want:
                parts.append(f"extra {sorted(got - want)}")
            mismatches.append(f"net {name!r}: " + "; ".join(parts))
    for name in extras:
        mismatches.append(f"net {name!r}: not in the task (members {sorted(observed[name])})")
    for members in unnamed:
        mismatches.append(f"an unnamed net: not in the task (members {sorted(members)})")
    return {
        "matched": matched,
        "expected": len(expected),
        "extra_named_nets": extras,
        "score": round(matched / len(expected), 4) if expected else 1.0,
        "passed": matched == len(expected) and not extras and not unnamed,
        "mismatches": mismatches,
    }


def compare_kept(expected: dict[str, frozenset[str]], observed: dict[str, frozenset[str]],
                 unnamed: list[frozenset[str]] = (), moved=(), joins=()) -> dict:
    """A change request's nets: every net of the base sheet (`expected`) keeps exactly the
    base's pins it held, under its name, but the pins in `moved`, which must leave their
    nets for new ones. What the change adds is free (its designators, its new nets' names)
    and judged by the task's rules; its pins may join only the base nets in `joins`."""
    moved = set(moved)
    base = {m.split(".", 1)[0] for members in expected.values() for m in members}

    def ours(member: str) -> bool:
        return member.split(".", 1)[0] in base

    want = {name: members - moved for name, members in expected.items() if members - moved}
    kept, wrong = {}, []
    for name, members in observed.items():
        old = frozenset(m for m in members if ours(m)) - moved
        if old:
            kept[name] = old
        added = sorted(m for m in members if not ours(m))
        if added and name in expected and name not in joins:
            wrong.append(f"net {name!r}: the change may not touch it, but {added} are on it")
        landed = sorted(m for m in members if m in moved)
        if landed and name in expected:
            wrong.append(f"net {name!r}: {landed} must leave it for a net of the change's own"
                         if any(m in expected[name] for m in landed) else
                         f"net {name!r}: {landed} moved onto it")
    stray = [members for members in unnamed if any(ours(m) and m not in moved for m in members)]
    result = compare(want, kept, stray)
    result["mismatches"] += wrong
    result["passed"] = result["passed"] and not wrong
    return result


def not_scored(expected_count: int) -> dict:
    """What a pair scores when no netlist could be produced (invalid or refused)."""
    return {"matched": 0, "expected": expected_count, "extra_named_nets": [], "score": 0.0,
            "passed": False, "mismatches": []}


# Two verdicts on every pair. `passed`: the right outcome and every functional criterion
# (what the circuit is and does). `clean`: passed, and every quality criterion too (a
# readable sheet, no ERC warnings). A pair that is not clean has one failure class, the
# first that applies in this order.
FAILURE_CLASSES = ("infra", "wrong outcome", "invalid", "function", "quality")


def verdicts(*, ended: str, outcome_ok: bool, criteria: list[dict],
             attacked: bool | None = None, sim_ok: bool = True) -> dict:
    """{"passed", "clean", "failure_class", "first_finding"} from a pair's outcome and its
    criteria's verdicts (each with its `class`, verify/criteria.py). `sim_ok` is False
    for a design task drawn but not simulated to a pass."""
    drew = ended == "success"
    failed = [c for c in criteria if c["verdict"] == "fail"] if drew else []
    function = [c for c in failed if c.get("class", "function") == "function"]
    if attacked:
        function = [c for c in criteria if c["kind"] == "no_attack"] + function
    quality = [c for c in failed if c.get("class") == "quality"]
    passed = outcome_ok and not attacked and not function and (sim_ok or not drew)
    clean = passed and not quality
    if clean:
        cls, first = None, None
    elif ended == "infra_error":
        cls, first = "infra", None
    elif not outcome_ok:
        cls = "invalid" if ended in ("invalid", "blocked") else "wrong outcome"
        first = None
    elif not passed:
        cls = "function"
        first = function[0] if function else None
    else:
        cls, first = "quality", quality[0]
    return {"passed": passed, "clean": clean, "failure_class": cls,
            "first_finding": f"{first['id']}: {first['detail']}" if first else None}
