"""Which model akcli gets for each placed part: wirebench/data/part_models.yaml.

akcli models R, C and L from their values; every other part needs a `models` entry in
the spec. This picks one per designator from the part's lib_id and value, and names the
parts it cannot model, so that a verdict can say `needs_human` instead of guessing.
"""

from __future__ import annotations

from functools import cache
from importlib import resources

PASSIVE_PREFIXES = ("R", "C", "L")
# Parts that are not circuit elements: akcli skips them itself.
NOT_ELEMENTS = ("J", "TP", "#", "$")


@cache
def library() -> dict:
    import yaml

    text = (resources.files("wirebench") / "data" / "part_models.yaml").read_text()
    return yaml.safe_load(text)


def _card(entry: dict) -> dict:
    card = {k: entry[k] for k in ("device", "pin_order", "model_name", "model_card")
            if k in entry}
    return card


def _variant(lib_id: str, value: str) -> dict | None:
    """The model entry of one lib_id and value, with the cards it includes."""
    entry = library().get(lib_id)
    if entry is None:
        return None
    if "by_value" not in entry:
        return _card(entry)
    chosen = entry["by_value"].get(str(value or "").strip().lower())
    if chosen is None:
        return None
    card = _card({**entry, **chosen})
    for ref in chosen.get("includes", []):
        other_lib, _, other_value = ref.rpartition(":")
        card["model_card"] = _variant(other_lib, other_value)["model_card"] + "\n" + \
            card["model_card"]
    return card


def models_for(components: list[dict]) -> tuple[dict, list[str]]:
    """({designator: akcli models entry}, [why a part has no model]) for `akcli read`'s
    components. A multi-unit part appears once per unit and gets one entry."""
    models: dict = {}
    missing: list[str] = []
    for comp in components:
        ref, lib_id = comp.get("designator") or "", comp.get("library_ref") or ""
        if ref in models or ref.startswith(NOT_ELEMENTS) or comp.get("dnp"):
            continue
        if ref.rstrip("0123456789") in PASSIVE_PREFIXES and lib_id.startswith("Device:"):
            continue  # akcli models it from its value (and says so when it cannot)
        card = _variant(lib_id, comp.get("value"))
        if card is not None:
            models[ref] = card
            continue
        entry = library().get(lib_id)
        why = (f"{ref} ({lib_id}) has no simulation model" if entry is None else
               f"{ref} ({lib_id}) value {comp.get('value')!r} names no model; "
               f"values with a model: {entry.get('values_hint', '')}")
        if why not in missing:
            missing.append(why)
    return models, missing
