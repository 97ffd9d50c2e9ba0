import copy

import pytest
import yaml
from aicd.common.errors import AicdError
from aicd.config import validate_config


@pytest.fixture(params=["config.yaml", "demo.yaml"])
def config(request, repo):
    return yaml.safe_load((repo / "config" / request.param).read_text())


def test_shipped_configs_are_valid(config):
    validate_config(config)
    classical = [d for d in config["detectors"].values() if d["kind"] not in ("encoder", "fast_detectgpt", "robust")]
    assert len(classical) == 11  # Random, Majority, {CB, SVM, LR} x {TF-IDF, AST, both}
    assert [d["kind"] for d in config["detectors"].values()].count("robust") == 1  # ours


def test_ood_config_is_valid_and_names_every_split(repo):
    config = yaml.safe_load((repo / "config" / "ood.yaml").read_text())
    validate_config(config)
    protocols = [t["ood"]["protocol"] for t in config["tasks"].values()]
    assert protocols.count("leave_one_language_out") == 3 and protocols.count("leave_one_family_out") == 6
    assert {"in_distribution", "codeaid"} <= set(protocols)


def test_full_config_is_the_release_on_the_hub(repo):
    config = yaml.safe_load((repo / "config" / "config.yaml").read_text())
    assert set(config["tasks"]) == {"T1", "T2", "T3"}
    for name, task in config["tasks"].items():
        assert task["release"]["hub"] == "AICD-bench/AICD-Bench" and task["release"]["name"] == name
        assert task["release"]["revision"]


def test_unknown_key_is_named(config):
    bad = copy.deepcopy(config)
    bad["detectorz"] = {}
    with pytest.raises(AicdError, match=r"config\.detectorz: unknown key \(did you mean 'detectors'\?\)"):
        validate_config(bad)


def test_a_mistake_is_told_with_the_config_file_that_holds_it(config, tmp_path):
    """explain_error names, for each `config.KEY` line, the last config file that sets KEY (as
    snakemake merges them), with a did-you-mean for unknown keys and kinds."""
    from aicd.config import explain_error

    base, layer = tmp_path / "base.yaml", tmp_path / "mine.yaml"
    base.write_text(yaml.safe_dump(config))
    mine = {"detectors": {"lr_tfidf": {"parms": {"C": 2}}, "x": {"kind": "logistic_regresion", "title": "X"}}}
    layer.write_text(yaml.safe_dump(mine))
    merged = copy.deepcopy(config)
    merged["detectors"]["lr_tfidf"]["parms"] = {"C": 2}
    merged["detectors"]["x"] = mine["detectors"]["x"]
    with pytest.raises(AicdError) as err:
        validate_config(merged)
    told = explain_error(err.value, [base, layer])
    assert f"{layer}: detectors.lr_tfidf.parms: unknown key (did you mean 'params'?)" in told
    merged["detectors"]["lr_tfidf"].pop("parms")
    with pytest.raises(AicdError) as err:
        validate_config(merged)
    told = explain_error(err.value, [base, layer])
    assert f"{layer}: detectors.x.kind: unknown kind 'logistic_regresion' (did you mean 'logistic_regression'?)" in told
    merged["detectors"]["x"]["kind"] = "majority"
    merged["features"]["tfidf"]["params"]["ngram_max"] = "three"
    with pytest.raises(AicdError) as err:
        validate_config(merged)
    assert f"{base}: features.tfidf.params.ngram_max: 'three' is not of type" in explain_error(err.value, [base, layer])


def test_a_value_given_on_the_command_line_is_blamed_there(config, tmp_path):
    """A key both a config file and --config set is the command line's (snakemake applies it last);
    one only a file sets stays the file's."""
    from aicd.config import COMMAND_LINE, explain_error

    base = tmp_path / "base.yaml"
    base.write_text(yaml.safe_dump(config))
    bad = copy.deepcopy(config)
    bad["seed"] = "abc"
    with pytest.raises(AicdError) as err:
        validate_config(bad)
    assert f"{COMMAND_LINE}: seed: 'abc' is not of type 'integer'" in explain_error(err.value, [base], None,
                                                                                    {"seed": "abc"})
    assert f"{base}: seed:" in explain_error(err.value, [base], None, {"results": "elsewhere"})


def test_bad_value_is_named_with_its_path(config):
    bad = copy.deepcopy(config)
    bad["features"]["tfidf"]["params"]["ngram_max"] = "three"
    with pytest.raises(AicdError, match=r"config\.features\.tfidf\.params\.ngram_max: 'three' is not of type 'integer'"):
        validate_config(bad)


def test_dangling_references_are_named(config):
    bad = copy.deepcopy(config)
    bad["detectors"]["lr_tfidf"]["features"] = "bag_of_words"
    bad["detectors"]["svm_ast"]["kind"] = "svm"
    with pytest.raises(AicdError) as err:
        validate_config(bad)
    assert "detectors.lr_tfidf.features: no feature set named 'bag_of_words'" in str(err.value)
    assert "detectors.svm_ast.kind: unknown kind 'svm'" in str(err.value)


def test_label_map_values_are_checked(config):
    bad = copy.deepcopy(config)
    task = next(iter(bad.get("sources", {}).values()), None) or next(iter(bad["tasks"].values()))
    task["label_map"] = {0: "humans"}
    with pytest.raises(AicdError, match="label_map.0: 'humans' is not one of"):
        validate_config(bad)


def test_detector_parameter_types_are_checked_when_the_workflow_starts(config):
    bad = copy.deepcopy(config)
    svm = next(name for name, det in bad["detectors"].items() if det["kind"] == "linear_svm")
    bad["detectors"][svm]["params"] = {"C": "abc"}
    with pytest.raises(AicdError, match=rf"config\.detectors\.{svm}\.params\.C: 'abc' is not of type 'number'"):
        validate_config(bad)


def test_schema_defaults_are_applied(repo):
    """Defaults live in the schema (snakemake.utils.validate with set_default), not in the rules."""
    config = yaml.safe_load((repo / "config" / "demo.yaml").read_text())
    del config["execution"]["workers"], config["llm"]
    validate_config(config)
    assert config["execution"]["workers"] == 1 and config["tasks_from"] == "release"
    assert config["llm"]["timeout"] == 120 and config["judging"]["fraction"] == 0.05
    assert config["dataset"]["minhash"] == {"num_perm": 128, "shingle_size": 5, "seed": 1}
    assert config["dataset"]["dedup"] == {"threshold": 0.8, "false_negative_weight": 0.8}


def test_enabled_is_true_false_or_auto(config):
    bad = copy.deepcopy(config)
    bad["execution"]["enabled"] = "maybe"
    with pytest.raises(AicdError, match=r"config\.execution\.enabled: 'maybe' is not one of \[True, False, 'auto'\]"):
        validate_config(bad)


def test_threads_are_not_config(config):
    bad = copy.deepcopy(config)
    bad["detectors"]["lr_tfidf"]["threads"] = 4
    with pytest.raises(AicdError, match=r"config\.detectors\.lr_tfidf\.threads: unknown key; allowed here: .*resources"):
        validate_config(bad)


@pytest.mark.parametrize("kind, given, meant", [("catboost", "iteratons", "iterations"),
                                                ("logistic_regression", "max_itr", "max_iter"),
                                                ("linear_svm", "dula", "dual")])
def test_a_misspelled_library_parameter_gets_a_did_you_mean(config, kind, given, meant):
    """A kind whose parameters pass on to its library (CatBoost, scikit-learn) refuses a name the
    library does not take with the did-you-mean every other key gets, at validation, not the
    library's own message at fit time; a real library argument not in the spec still passes."""
    bad = copy.deepcopy(config)
    name = next(n for n, d in bad["detectors"].items() if d.get("features"))
    bad["detectors"][name] = {**bad["detectors"][name], "kind": kind, "params": {given: 5}}
    with pytest.raises(AicdError) as err:
        validate_config(bad)
    said = str(err.value)
    assert f"config.detectors.{name}.params:" in said and f"no parameter '{given}' (did you mean '{meant}'?)" in said
    assert "unexpected keyword argument" not in said
    good = copy.deepcopy(config)
    library_only = {"catboost": {"n_estimators": 5}, "logistic_regression": {"tol": 0.001},
                    "linear_svm": {"solver": "liblinear", "dual": True}}[kind]
    good["detectors"][name] = {**good["detectors"][name], "kind": kind, "params": library_only}
    validate_config(good)
