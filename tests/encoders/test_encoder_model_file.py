"""A fitted encoder's folder is read from its safetensors and JSON only: reading it never
unpickles (torch.load is not called), a folder whose weights are a pytorch_model.bin (a pickle)
is refused in one line, and the record beside the weights is bundle.skops."""

from __future__ import annotations

import json

import numpy as np
import pytest
from aicd.common.errors import AicdError
from aicd.detectors import build
from aicd.detectors.bundle import BUNDLE_FILE, load_bundle, make_bundle, save_bundle

pytestmark = pytest.mark.encoders


@pytest.fixture
def saved_encoder(tiny_encoder, tmp_path):
    """The tiny BERT with a fresh two-class head, saved as the detect job saves an encoder."""
    detector = build("encoder", {"model": tiny_encoder, "device": "cpu"}, seed=0)
    detector._setup_device()
    detector._load(tiny_encoder, ["human", "machine"])
    detector.classes_ = np.array(["human", "machine"], dtype=object)
    save_bundle(make_bundle(detector, None, {"kind": "encoder"}, "T1", train_languages=["Python"]),
                tmp_path / "model")
    return detector, tmp_path / "model"


def test_a_fitted_encoder_is_read_without_unpickling(saved_encoder, code_rows, monkeypatch):
    import torch

    detector, folder = saved_encoder
    assert (folder / "model.safetensors").is_file() and (folder / BUNDLE_FILE).is_file()
    assert not list(folder.glob("*.bin")) and not list(folder.glob("*.pkl"))

    def no_unpickling(*args, **kwargs):
        raise AssertionError("torch.load called while reading a fitted encoder")

    monkeypatch.setattr(torch, "load", no_unpickling)
    loaded = load_bundle(folder, device="cpu")
    assert loaded.task == "T1" and loaded.train_languages == ["Python"]
    texts = code_rows[0][:8]
    np.testing.assert_allclose(loaded.detector.predict_scores(texts), detector.predict_scores(texts), atol=1e-6)


def test_an_encoder_folder_with_pickled_weights_is_refused(saved_encoder):
    import torch
    from safetensors.torch import load_file

    _, folder = saved_encoder
    torch.save(load_file(folder / "model.safetensors"), folder / "pytorch_model.bin")
    (folder / "model.safetensors").unlink()
    with pytest.raises(AicdError, match="could not be loaded as a sequence classifier"):
        load_bundle(folder, device="cpu")
    assert json.loads((folder / "detector.json").read_text())["kind"] == "encoder"
