"""Fast-DetectGPT (Bao et al., ICLR 2024): the analytic sampling discrepancy, i.e. conditional
probability curvature, of a causal LM.

For a text x with tokens x_1..x_n, a scoring model q and a sampling (reference) model p:

    crit(x) = (sum_t log q(x_t|x_<t) - sum_t mu_t) / sqrt(sum_t var_t)
    mu_t    = E_{z~p(.|x_<t)} log q(z|x_<t),  var_t = Var_{z~p(.|x_<t)} log q(z|x_<t)

computed in closed form from the two models' next-token distributions: one forward pass per
model, no perturbation sampling. Higher = more machine-like. By default p = q (the white-box
setting, one forward pass in all).

Detector settings (our choices; the paper names no scoring model and no threshold):
- `model`: Hub id or local folder of the scoring causal LM (`reference_model`: the sampling
  model, default the same). The full config's default is a code LM from the Hub; the full demo
  scores with the pinned SmolLM2 (the zero-shot panel); a config may train one (aicd.lm, params.train_lm).
- threshold: the value maximising macro-F1 (human vs machine) on the validation split
  (`threshold: validation`, the default), or a number.
- labels: the gold labels are binarised, human vs every other class (the paper's binarised
  Task 3; on a binary task this changes nothing).
- `window`: tokens per sample (longer code is truncated), `batch_size`, `device`,
  `max_validation_rows` (a class-stratified sample for choosing the threshold).
The raw criterion of every test sample is kept (`criterion_` and the `criterion` column of the
predictions), so AUROC can be reported beside macro-F1."""

from __future__ import annotations

import json
import logging
import time
from pathlib import Path

import numpy as np

from ..common.params import Param, ParamSpec
from ..data.metrics import auroc, best_threshold
from ..lm.stats import backbone_and_head
from ..outputs import beside, relative
from .base import Detector, pd_isna, register

log = logging.getLogger("aicd.detectors.fast_detectgpt")

HUMAN, MACHINE = "human", "machine"
PARAMS = ParamSpec("Fast-DetectGPT", (
    Param("model", (str,), None, "ours", "the scoring causal LM: a Hub id or a local folder (replaced by the LM "
          "the workflow trains when train_lm is set)"),
    Param("reference_model", (str,), None, "ours", "the sampling model (null: the scoring model, white-box)"),
    Param("window", (int,), 256, "ours", "tokens per sample (longer code is truncated)", minimum=2),
    Param("batch_size", (int,), 16, "ours", "samples per forward pass", minimum=1),
    Param("device", (str,), "auto", "ours", "auto (CUDA when present), cpu or cuda"),
    Param("threshold", (str, float), "validation", "ours", "validation (the value maximising macro-F1 there) or a "
          "number"),
    Param("max_validation_rows", (int,), None, "ours", "a class-stratified sample of validation for the threshold",
          minimum=1),
    Param("human_label", (str,), HUMAN, "ours", "the class that stays human when labels are binarised"),
    Param("chunk_tokens", (int,), 128, "ours", "LM-head chunk of the white-box path (0: full logits)", minimum=0),
    Param("train_lm", (dict,), None, "ours", "aicd.lm settings (and `task`) of a causal LM the workflow trains on "
          "the human code of a task's train split, used as the scoring model"),
))
DEFAULTS = PARAMS.defaults()


def criterion_from_logits(logits_score, logits_ref, labels, mask):
    """Per-sample analytic sampling discrepancy. logits_*: (B, T, V) predicting `labels` (B, T);
    mask (B, T) bool marks real tokens. Returns a float tensor (B,)."""
    import torch
    lprobs_score = torch.log_softmax(logits_score.float(), dim=-1)
    if logits_ref is logits_score:
        lprobs_ref = lprobs_score
    else:
        lprobs_ref = torch.log_softmax(logits_ref.float(), dim=-1)
    probs_ref = lprobs_ref.exp()
    ll = lprobs_score.gather(-1, labels.unsqueeze(-1)).squeeze(-1)
    mean_ref = (probs_ref * lprobs_score).sum(-1)
    var_ref = (probs_ref * lprobs_score.square()).sum(-1) - mean_ref.square()
    m = mask.to(ll.dtype)
    return ((ll - mean_ref) * m).sum(-1) / ((var_ref * m).sum(-1).clamp_min(1e-12)).sqrt()






@register("fast_detectgpt")
class FastDetectGPTDetector(Detector):
    # 2: its validation threshold is the exact cut that maximises macro-F1 at a criterion value
    # (aicd.data.metrics), not a midpoint from a grid of at most 2,001
    VERSION = 2
    inputs = "text"
    zero_shot = True
    binarise = True
    environment = "neural"
    max_threads = 8
    mem_mb = 8000
    applies_to_new_code = False  # its scoring model is another job's output or a Hub download
    PARAMS = PARAMS

    def check_params(self) -> None:
        super().check_params()
        if isinstance(self.setting("threshold"), str) and self.setting("threshold") != "validation":
            raise ValueError("the 'threshold' parameter of Fast-DetectGPT must be 'validation' or a number")

    @classmethod
    def prepared_inputs(cls, name: str, params: dict) -> dict[str, str]:
        """The causal LM the workflow trains for it (rule train_causal_lm), when train_lm is set."""
        return {"lm": relative("lm", name)} if (params or {}).get("train_lm") else {}

    @property
    def settings(self) -> dict:
        out = {**DEFAULTS, **self.params}
        if self.prepared.get("lm"):  # the LM trained for this detector replaces params.model
            out["model"] = self.prepared["lm"]
        return out

    # -- labels ---------------------------------------------------------------------------------

    def label_of(self, y) -> np.ndarray:
        y = np.asarray(y, dtype=object)
        out = self.binarize(y)
        out[pd_isna(y)] = None  # an unlabelled test row stays unlabelled
        return out

    def binarize(self, y) -> np.ndarray:
        """human stays human; every other class becomes machine."""
        y = np.asarray(y, dtype=object)
        return np.where(y == self.settings["human_label"], HUMAN, MACHINE).astype(object)

    # -- model ----------------------------------------------------------------------------------

    def load_models(self) -> None:
        if getattr(self, "model_", None) is not None:
            return
        import torch
        from transformers import AutoModelForCausalLM, AutoTokenizer

        from ..models.pretrained import resolve_model
        from .encoder import choose_device
        s = self.settings
        if not s["model"]:
            from ..common.errors import AicdError
            raise AicdError("fast_detectgpt needs params.model: a causal LM's Hub id or local folder")
        torch.set_num_threads(max(1, self.threads))
        self.device_ = choose_device(s["device"])
        path = resolve_model(s["model"])
        self.tokenizer_ = AutoTokenizer.from_pretrained(path)
        if self.tokenizer_.pad_token is None:
            self.tokenizer_.pad_token = self.tokenizer_.eos_token
        self.model_ = AutoModelForCausalLM.from_pretrained(path).to(self.device_).eval()
        ref = s["reference_model"]
        self.ref_model_ = None
        if ref and ref != s["model"]:
            ref_path = resolve_model(ref)
            if AutoTokenizer.from_pretrained(ref_path).get_vocab() != self.tokenizer_.get_vocab():
                from ..common.errors import AicdError
                raise AicdError(f"fast_detectgpt: reference_model {ref} does not share the scoring model's tokenizer "
                                f"({s['model']}); the criterion compares their distributions token by token")
            self.ref_model_ = AutoModelForCausalLM.from_pretrained(ref_path).to(self.device_).eval()

    def encode(self, texts) -> list[list[int]]:
        """Token ids per text, truncated to the window (a leading BOS where the tokenizer has one,
        so the first code token is scored too)."""
        tok, window = self.tokenizer_, self.settings["window"]
        bos = [tok.bos_token_id] if tok.bos_token_id is not None else []
        ids = tok([str(t) for t in texts], add_special_tokens=False, truncation=True,
                  max_length=window - len(bos))["input_ids"]
        return [bos + x for x in ids]

    def batches(self, ids: list[list[int]]):
        """(order positions, input_ids, attention_mask) batches, sorted by length (less padding)."""
        import torch
        order = np.argsort([len(x) for x in ids], kind="stable")
        pad = self.tokenizer_.pad_token_id
        bs = self.settings["batch_size"]
        for start in range(0, len(order), bs):
            pos = order[start:start + bs]
            width = max(2, max(len(ids[i]) for i in pos))
            input_ids = torch.full((len(pos), width), pad, dtype=torch.long)
            mask = torch.zeros((len(pos), width), dtype=torch.long)
            for k, i in enumerate(pos):
                input_ids[k, :len(ids[i])] = torch.tensor(ids[i], dtype=torch.long)
                mask[k, :len(ids[i])] = 1
            yield pos, input_ids.to(self.device_), mask.to(self.device_)

    TEXTS_PER_CHUNK = 2048  # texts tokenised at a time: the tokenizer holds every token of a long text

    def criteria(self, texts) -> np.ndarray:
        """The analytic criterion per text (NaN for a text of fewer than two tokens), a chunk of
        texts at a time (each chunk's batches sorted by length)."""
        self.load_models()
        out = np.full(len(texts), np.nan, dtype=np.float64)
        for start in range(0, len(texts), self.TEXTS_PER_CHUNK):
            out[start:start + self.TEXTS_PER_CHUNK] = self.criteria_ids(self.encode(texts[start:start + self.TEXTS_PER_CHUNK]))
            if len(texts) > self.TEXTS_PER_CHUNK:
                log.info("criterion of %d of %d texts", min(start + self.TEXTS_PER_CHUNK, len(texts)), len(texts))
        return out

    def criteria_ids(self, ids: list[list[int]]) -> np.ndarray:
        """The criterion per token sequence (already truncated; NaN below two tokens)."""
        import torch
        self.load_models()
        out = np.full(len(ids), np.nan, dtype=np.float64)
        chunked = self.ref_model_ is None and self.settings["chunk_tokens"] and backbone_and_head(self.model_)
        with torch.no_grad():
            for pos, input_ids, mask in self.batches(ids):
                if chunked:
                    crit = self._criterion_chunked(input_ids, mask)
                else:
                    logits = self.model_(input_ids=input_ids, attention_mask=mask).logits[:, :-1]
                    ref = logits if self.ref_model_ is None else \
                        self.ref_model_(input_ids=input_ids, attention_mask=mask).logits[:, :-1]
                    vocab = min(logits.shape[-1], ref.shape[-1])  # padded embedding rows differ (as Bao et al.)
                    logits, ref = logits[..., :vocab], ref[..., :vocab]
                    crit = criterion_from_logits(logits, ref, input_ids[:, 1:], mask[:, 1:].bool())
                out[pos] = crit.cpu().numpy()
        short = np.array([len(x) < 2 for x in ids], dtype=bool)
        out[short] = np.nan
        return out

    def _criterion_chunked(self, input_ids, mask):
        """White-box criterion without materialising the (B, T, V) logits: the backbone's hidden
        states of the real (unpadded) positions go through the LM head `chunk_tokens` at a time,
        and each chunk's log-probabilities are reduced while they are still in cache."""
        import torch
        backbone, head = backbone_and_head(self.model_)
        hidden = backbone(input_ids=input_ids, attention_mask=mask).last_hidden_state[:, :-1]
        keep = mask[:, 1:].bool()
        h = hidden[keep]                                  # (N, H) real positions only
        labels = input_ids[:, 1:][keep]
        owner = torch.arange(input_ids.shape[0], device=h.device).unsqueeze(1).expand_as(keep)[keep]
        num = torch.zeros(input_ids.shape[0], dtype=torch.float64, device=h.device)
        var = torch.zeros_like(num)
        step = int(self.settings["chunk_tokens"])
        for start in range(0, h.shape[0], step):
            z = head(h[start:start + step]).float()          # (n, V) logits of this chunk
            # With lq = z - logsumexp(z) and p = softmax(z): ll - E_p[lq] = z_label - E_p[z] and
            # Var_p[lq] = E_p[z^2] - E_p[z]^2, so no log-probability tensor is needed (fewer passes).
            zmax = z.amax(-1, keepdim=True)
            e = (z - zmax).exp_()
            total = e.sum(-1)
            ez = e.mul_(z)                                    # e is not needed after this
            m1 = ez.sum(-1) / total
            m2 = torch.linalg.vecdot(ez, z) / total
            z_label = z.gather(-1, labels[start:start + step].unsqueeze(-1)).squeeze(-1)
            num.index_add_(0, owner[start:start + step], (z_label - m1).double())
            var.index_add_(0, owner[start:start + step], (m2 - m1 * m1).double())
        return (num / var.clamp_min(1e-12).sqrt()).float()

    # -- estimator ------------------------------------------------------------------------------

    def _validation_sample(self, X, y):
        cap = self.settings["max_validation_rows"]
        if cap is None or len(X) <= cap:
            return np.asarray(X, dtype=object), y
        from sklearn.model_selection import train_test_split
        try:
            Xs, _, ys, _ = train_test_split(np.asarray(X, dtype=object), y, train_size=cap, stratify=y,
                                            random_state=self.seed)
        except ValueError:
            rng = np.random.default_rng(self.seed)
            idx = rng.choice(len(X), cap, replace=False)
            Xs, ys = np.asarray(X, dtype=object)[idx], y[idx]
        return Xs, ys

    def fit(self, X, y, X_val=None, y_val=None) -> FastDetectGPTDetector:
        """Zero-shot: nothing is trained. Only the threshold is set, on validation (else train)."""
        self.classes_ = np.array([HUMAN, MACHINE], dtype=object)
        started = time.perf_counter()
        s = self.settings
        report = {"model": s["model"], "reference_model": s["reference_model"] or s["model"],
                  "window": s["window"]}
        if s["threshold"] == "validation":
            Xt, yt = (X_val, y_val) if X_val is not None and len(X_val) else (X, y)
            Xt, yt = self._validation_sample(Xt, self.binarize(yt))
            crit = self.criteria(Xt)
            ok = np.isfinite(crit)
            self.threshold_, f1 = best_threshold(crit[ok], yt[ok] == MACHINE)
            report.update({"threshold_from": "validation" if X_val is not None and len(X_val) else "train",
                           "threshold_rows": int(ok.sum()), "threshold_macro_f1": f1,
                           "threshold_auroc": auroc(crit[ok], yt[ok] == MACHINE)})
        else:
            self.load_models()
            self.threshold_ = float(s["threshold"])
            report["threshold_from"] = "params"
        report["threshold"] = self.threshold_
        report["fit_seconds"] = round(time.perf_counter() - started, 2)
        self.fit_report_ = report
        log.info("threshold %.4f (%s)", self.threshold_, report["threshold_from"])
        return self

    def predict_with_scores(self, X):
        started = time.perf_counter()
        crit = self.criteria(X)
        self.criterion_ = crit
        filled = np.where(np.isfinite(crit), crit, -np.inf)   # too short to score: human
        pred = np.where(filled > self.threshold_, MACHINE, HUMAN).astype(object)
        p_machine = 1.0 / (1.0 + np.exp(-np.clip(filled - self.threshold_, -50, 50)))
        self.predict_seconds_ = time.perf_counter() - started
        return pred, np.stack([1.0 - p_machine, p_machine], axis=1)

    def predict(self, X):
        return self.predict_with_scores(X)[0]

    def extra_columns(self) -> dict:
        return {"criterion": self.criterion_.astype(np.float32)} if getattr(self, "criterion_", None) is not None else {}

    def summary(self, gold=None) -> dict:
        """Settings, the threshold and how it was chosen, timings, the test AUROC, and the
        trained scoring LM's record (lm.json) when there is one."""
        report: dict = {}
        crit = getattr(self, "criterion_", None)
        if crit is not None:
            ok = np.isfinite(crit)
            report.update({"test_rows": int(len(crit)), "test_unscored_too_short": int((~ok).sum()),
                           "predict_seconds": round(self.predict_seconds_, 2),
                           "samples_per_second": round(len(crit) / self.predict_seconds_, 2)
                           if self.predict_seconds_ else None})
            if gold is not None:
                gold = np.asarray(gold, dtype=object)
                report["test_auroc"] = auroc(crit[ok], self.binarize(gold)[ok] == MACHINE)
                report["binarized_from"] = sorted({str(g) for g in gold if g is not None})
        lm = self.prepared.get("lm")
        if lm and Path(beside(lm, "lm_report")).is_file():
            report["scoring_lm"] = json.loads(Path(beside(lm, "lm_report")).read_text())
        return {"settings": dict(self.settings), "classes": list(map(str, self.classes_)), "threshold": self.threshold_,
                "fit": getattr(self, "fit_report_", {}), "report": report}

    def __getstate__(self):  # never pickle the torch models
        state = dict(self.__dict__)
        for key in ("model_", "ref_model_", "tokenizer_"):
            state.pop(key, None)
        return state
