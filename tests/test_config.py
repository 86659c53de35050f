"""Config schema: defaults, messages that name the key, and the kind list kept in step."""

from __future__ import annotations

import pytest
import yaml
from conftest import REPO

from wirebench.agents import KINDS, OFFLINE_KINDS
from wirebench.config import ConfigError, check, load_config, schema, select_models


def test_the_shipped_config_is_valid_and_gets_defaults():
    config = load_config(REPO / "config" / "config.yaml")
    assert config["samples"] == 1 and "reference" in config["models"]


def test_schema_kinds_are_the_registered_kinds():
    enum = schema()["$defs"]["model"]["properties"]["kind"]["enum"]
    assert sorted(enum) == sorted(KINDS)
    assert set(KINDS) >= OFFLINE_KINDS


@pytest.mark.parametrize(("models", "message"), [
    ({"m1": {"kind": "telepathy"}}, "config key models.m1.kind: 'telepathy' is not one of"),
    ({"m1": {"kind": "ops_dir"}}, "config key models.m1: 'dir' is a required property"),
    ({"m1": {"kind": "reference", "x": 1}}, "('x' was unexpected)"),
    ({"bad name": {"kind": "reference"}}, "does not match"),
])
def test_model_errors_name_the_key(models, message):
    with pytest.raises(ConfigError) as err:
        check({"tasks_dir": "t", "symbols": ["a.kicad_sym"], "models": models})
    assert message in str(err.value)


def test_a_symbol_that_is_not_a_library_is_refused():
    with pytest.raises(ConfigError, match="config key symbols.0"):
        check({"tasks_dir": "t", "symbols": ["Device.lib"], "models": {"r": {"kind": "reference"}}})


def test_command_line_model_names_select_from_the_file():
    catalog = yaml.safe_load((REPO / "config" / "config.yaml").read_text())["models"]
    assert select_models({"models": "reference"}, catalog) == {"reference": catalog["reference"]}
    with pytest.raises(ConfigError, match="no model named 'nope'"):
        select_models({"models": ["reference", "nope"]}, catalog)
