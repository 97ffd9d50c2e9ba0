"""kind: hf_classifier, params: {model: FOLDER_OR_HUB_ID, label_map: {MODEL_LABEL: TASK_LABEL}}:
a sequence classifier someone already fine-tuned, applied to code without training (a user's
detector brought without editing the package, beside aicd.detectors.plugins). Needs torch and
transformers (the neural environment)."""

from __future__ import annotations

import numpy as np

from ..common.errors import AicdError
from ..common.params import Param, ParamSpec
from .base import Detector, register


@register("hf_classifier")
class HFClassifierDetector(Detector):
    """An already fine-tuned sequence classifier (a save_pretrained folder, a Hub id, or
    package:NAME), applied without training: its labels mapped to the task's by `label_map`, the
    probabilities of labels mapped to one class summed. Zero-shot: the train split is unread."""

    inputs = "text"
    zero_shot = True
    environment = "neural"
    mem_mb = 6000
    max_threads = 4
    PARAMS = ParamSpec("a fine-tuned classifier", (
        Param("model", (str,), None, "ours", "a save_pretrained folder, a Hub id or package:NAME"),
        Param("label_map", (dict,), None, "ours", "the model's labels (id2label names) -> the task's labels"),
        Param("max_length", (int,), 512, "ours", "tokens per input (longer code is truncated)", minimum=8),
        Param("batch_size", (int,), 16, "ours", "rows per forward pass", minimum=1),
        Param("device", (str,), "auto", "ours", "auto (GPU where there is one), cpu or cuda",
              choices=("auto", "cpu", "cuda")),
    ))

    def check_params(self) -> None:
        super().check_params()
        if not self.params.get("model"):
            raise ValueError("give model: the folder or Hub id of a fine-tuned sequence classifier")
        if not self.params.get("label_map"):
            raise ValueError("give label_map: each of the model's labels -> one of the task's (e.g. {LABEL_0: human})")

    def __getstate__(self):
        state = dict(self.__dict__)
        state.pop("model_", None)  # read again from params.model where the pickle is used
        state.pop("tokenizer_", None)
        return state

    def _load(self):
        if getattr(self, "model_", None) is not None:
            return
        import torch
        from transformers import AutoModelForSequenceClassification, AutoTokenizer

        from ..models.pretrained import resolve_model
        from .encoder.runtime import choose_device

        path = resolve_model(self.params["model"])
        self.tokenizer_ = AutoTokenizer.from_pretrained(path)
        self.model_ = AutoModelForSequenceClassification.from_pretrained(path).eval()
        self.device_ = choose_device(self.setting("device"))
        self.model_.to(self.device_)
        torch.set_num_threads(max(1, int(self.threads)))
        names = [str(self.model_.config.id2label[i]) for i in range(self.model_.config.num_labels)]
        self.label_map_ = {str(k): str(v) for k, v in self.params["label_map"].items()}  # YAML {0: human} too
        unmapped = [n for n in names if n not in self.label_map_]
        if unmapped:
            raise AicdError(f"hf_classifier {self.params['model']}: label_map has no entry for the model's labels "
                            f"{unmapped} (its labels: {names})")
        self.model_labels_ = names

    def fit(self, X, y, X_val=None, y_val=None):
        self._load()
        task = {str(c) for c in y if c is not None}
        mapped = [self.label_map_[n] for n in self.model_labels_]
        outside = sorted(set(mapped) - task)
        if outside:
            raise AicdError(f"hf_classifier {self.params['model']}: label_map names {outside}, not among the task's "
                            f"labels {sorted(task)}")
        self.classes_ = np.array(sorted(set(mapped), key=mapped.index), dtype=object)
        self.columns_ = np.array([[m == c for c in self.classes_] for m in mapped], dtype=float)  # model -> task
        return self

    def predict_scores(self, X):
        import torch

        self._load()
        out = []
        size = self.setting("batch_size")
        with torch.inference_mode():
            for start in range(0, len(X), size):
                batch = self.tokenizer_(list(X[start:start + size]), truncation=True, padding=True,
                                        max_length=self.setting("max_length"), return_tensors="pt").to(self.device_)
                out.append(torch.softmax(self.model_(**batch).logits.float(), dim=-1).cpu().numpy())
        probs = np.vstack(out) if out else np.zeros((0, len(self.model_labels_)))
        return probs @ self.columns_

    def predict(self, X):
        return self.classes_[self.predict_scores(X).argmax(axis=1)]

    def predict_with_scores(self, X):
        scores = self.predict_scores(X)
        return self.classes_[scores.argmax(axis=1)], scores
