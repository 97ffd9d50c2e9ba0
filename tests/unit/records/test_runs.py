"""A results root belongs to one run (aicd.records.runs): the same files rerun, a layer added grows the
run with one line, anything else is refused with the way to a root of its own; and the
machine's answers for `auto` are recorded once and kept (aicd.resolve)."""

from __future__ import annotations

import json

import pytest
from aicd.common.errors import AicdError
from aicd.records import runs
from aicd.resolve import resolve


def test_a_root_is_claimed_by_its_first_run(tmp_path):
    root = tmp_path / "results"
    assert runs.check(root, ["config/demo.yaml"]) is None  # nobody's yet
    runs.claim(root, ["config/demo.yaml"])
    assert runs.recorded(root)["configfiles"] == ["config/demo.yaml"]
    assert runs.check(root, ["config/demo.yaml"]) is None  # an ordinary rerun


def test_a_layer_grows_the_run_and_dropping_it_is_refused(tmp_path):
    root = tmp_path / "results"
    runs.claim(root, ["config/demo.yaml"])
    note = runs.check(root, ["config/demo.yaml", "mine.yaml"])
    assert "now also has mine.yaml (a layer added)" in note
    runs.claim(root, ["config/demo.yaml", "mine.yaml"])
    with pytest.raises(AicdError) as err:
        runs.check(root, ["config/demo.yaml"])
    assert "would rewrite its tables without the rows of mine.yaml" in str(err.value)
    assert "--config results=DIR" in str(err.value)


def test_a_dry_run_says_a_layer_would_be_added_and_a_layer_comes_off_on_purpose(tmp_path):
    """-n records nothing, so it never says a layer was added; --config drop_layers=true takes
    the last layers off (their rows leave the tables), which is refused without it."""
    root = tmp_path / "results"
    runs.claim(root, ["config/demo.yaml"])
    note = runs.check(root, ["config/demo.yaml", "mine.yaml"], dry_run=True)
    assert "would add mine.yaml as a layer" in note and "a dry run records nothing" in note
    assert "(a layer added)" not in note and "base: " in note
    runs.claim(root, ["config/demo.yaml", "mine.yaml"])
    with pytest.raises(AicdError, match=r"--config drop_layers=true"):
        runs.check(root, ["config/demo.yaml"])
    assert "would take the layer mine.yaml off" in runs.check(root, ["config/demo.yaml"], dry_run=True,
                                                                drop_layers=True)
    note = runs.check(root, ["config/demo.yaml"], drop_layers=True)
    assert "takes the layer mine.yaml off" in note and "their files stay" in note
    runs.claim(root, ["config/demo.yaml"])
    assert runs.check(root, ["config/demo.yaml"]) is None
    with pytest.raises(AicdError, match="would overwrite its files"):  # not a prefix: no flag makes it one
        runs.check(root, ["mine.yaml"], drop_layers=True)


def test_another_config_is_refused_before_any_job(tmp_path):
    root = tmp_path / "results"
    runs.claim(root, ["config/demo.yaml"])
    with pytest.raises(AicdError, match=r"holds the run of config/demo.yaml .* this run \(config/own_detector.yaml\) "
                                        r"would overwrite its files"):
        runs.check(root, ["config/own_detector.yaml"])


def test_identity_names_repository_and_working_directory_files_relatively(tmp_path, repo):
    work, elsewhere = tmp_path / "run", tmp_path / "elsewhere"
    files = [repo / "config" / "demo.yaml", work / "override.yaml", elsewhere / "mine.yaml"]
    assert runs.identity(files, repo, work) == ["config/demo.yaml", "override.yaml",
                                                str((elsewhere / "mine.yaml").resolve())]
    # the same run when its folder, config and all, is copied elsewhere
    assert runs.identity([repo / "config" / "demo.yaml", tmp_path / "copy" / "override.yaml"], repo,
                         tmp_path / "copy") == ["config/demo.yaml", "override.yaml"]


def config_asking_for_an_optional_source(path):
    return {"dataset": {"sources": ["extra"]}, "sources": {"extra": {"files": str(path), "optional": True}}}


def test_recorded_answers_are_kept_until_a_reprobe(tmp_path):
    results, data = tmp_path / "results", tmp_path / "extra.parquet"
    config = config_asking_for_an_optional_source(data)
    assert resolve(config, {}, results) == {"absent_sources": {"extra": str(data)}}
    data.write_text("now here")  # the machine changed
    notes = []
    assert resolve(config, {}, results, notes=notes) == {"absent_sources": {"extra": str(data)}}  # kept
    assert len(notes) == 1 and "--config reprobe=true" in notes[0] and "its plan follows the record" in notes[0]
    assert resolve({**config, "reprobe": True}, {}, results) == {"absent_sources": {}}  # asked for: probed again
    assert json.loads((results / "resolved.json").read_text()) == {"absent_sources": {}}
    notes = []
    assert resolve(config, {}, results, notes=notes) == {"absent_sources": {}} and notes == []


def test_auto_execution_asks_the_configured_engine(monkeypatch):
    """`enabled: auto` with `engine: docker` records no execution where only Podman could run
    it: the jobs would use Docker and fail."""
    from aicd.resolve import probe

    monkeypatch.setenv("DOCKER_HOST", "unix:///nonexistent/aicd-test/docker.sock")
    asked = []
    monkeypatch.setattr("aicd.sandbox.pool.available", lambda engine: asked.append(engine) or engine != "docker")
    for engine, expected in (("docker", False), ("podman", True), ("auto", True)):
        config = {"execution": {"enabled": "auto", "engine": engine}}
        assert probe(config, {})["execution"] is expected
    assert asked == ["docker", "podman", "auto"]
