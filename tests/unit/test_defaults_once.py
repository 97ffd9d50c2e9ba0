"""Every default has one home: the config schema (filled in by validation) or a kind's
ParamSpec. Code outside a validated config reads the schema's value (aicd.common.defaults)
rather than restating it, so a changed schema default changes every run that uses it."""

import pytest
import yaml
from aicd.common.defaults import schema_default
from aicd.config import validate_config


def test_schema_default_is_the_value_validation_fills_in(repo):
    config = yaml.safe_load((repo / "config" / "demo.yaml").read_text())
    for section in ("calibration", "seed"):
        config.pop(section, None)  # left to the schema
    validate_config(config)
    for key in ("calibration.view_fpr", "calibration.held_out", "calibration.floor", "seed"):
        node = config
        for part in key.split("."):
            node = node[part]
        assert schema_default(key) == node, key


@pytest.mark.parametrize("key, said", [("calibration.no_such_key", "has no key"),
                                       ("calibration.fprs", "no default")])  # fprs: filled in by aicd.config.schema
def test_schema_default_names_a_key_without_one(key, said):
    with pytest.raises(KeyError, match=said):
        schema_default(key)
