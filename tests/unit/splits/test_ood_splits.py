"""The out-of-distribution protocol (aicd.splits.ood): what is held out, and that validation
is group-held-out, seeded and disjoint from test."""

import numpy as np
import pandas as pd
import pytest
from aicd.common.errors import AicdError
from aicd.splits import ood

FAMILY_GENERATORS = {
    "Meta-Llama": "meta-llama/Llama-3.1-8B", "Qwen": "Qwen/Qwen2.5-Coder-7B", "Phi": "microsoft/Phi-3",
    "01-ai": "01-ai/Yi-Coder-9B", "BigCode": "bigcode/starcoder2", "DeepSeek-AI": "deepseek-ai/coder",
    "IBM-Granite": "ibm-granite/granite-8b", "Gemma": "google/gemma-2",
}


def synthetic_trial(seed=0):
    """A raw trial-like table: 8 families (6 large, 2 long-tail), three languages, the
    inverted label column of the real file."""
    rng = np.random.default_rng(seed)
    rows = []
    sizes = {"Meta-Llama": 40, "Qwen": 35, "Phi": 30, "01-ai": 25, "BigCode": 20, "DeepSeek-AI": 15,
             "IBM-Granite": 6, "Gemma": 4}
    for fam, n in sizes.items():
        for k in range(n):
            rows.append((f"// {fam} {k}\nint main() {{ return {k}; }}\n", FAMILY_GENERATORS[fam],
                         ["Python", "Java", "C++"][k % 3]))
    for k in range(200):
        rows.append((f"x = {k}  # human {rng.integers(1e9)}", "Human", ["Python", "Java", "C++"][k % 3]))
    raw = pd.DataFrame(rows, columns=["code", "generator", "language"])
    raw["label"] = (raw["generator"] == "Human").astype(int)  # inverted, as in the real file
    return raw


@pytest.fixture(scope="module")
def trial():
    return ood.trial_samples(synthetic_trial())


def test_trial_labels_come_from_the_generator_column(trial):
    assert (trial.loc[trial["generator"] == "Human", "label"] == "human").all()
    assert (trial.loc[trial["generator"] != "Human", "label"] == "machine").all()
    assert trial["family"].notna().all() and trial["id"].is_unique


def test_largest_families_are_by_machine_rows(trial):
    assert ood.largest_families(trial) == ["Meta-Llama", "Qwen", "Phi", "01-ai", "BigCode", "DeepSeek-AI"]


def _ids(tables):
    return {name: set(t["id"]) for name, t in tables.items()}


def _check_disjoint(tables):
    ids = _ids(tables)
    assert not ids["train"] & ids["test"] and not ids["train"] & ids["validation"] and not ids["validation"] & ids["test"]


def test_validation_is_the_long_tail_families_and_matching_humans(trial):
    tables = ood.leave_one_family_out(trial, "Qwen", seed=0)
    val = tables["validation"]
    assert set(val.loc[val["label"] == "machine", "family"]) == {"IBM-Granite", "Gemma"}
    assert (val["label"] == "human").sum() == (val["label"] == "machine").sum()
    assert not set(tables["train"]["family"]) & {"IBM-Granite", "Gemma", "Qwen"}
    _check_disjoint(tables)


def test_leave_one_family_out_holds_out_the_family_and_matching_humans(trial):
    tables = ood.leave_one_family_out(trial, "BigCode", seed=0)
    test = tables["test"]
    machine = test[test["label"] == "machine"]
    assert set(machine["family"]) == {"BigCode"} and len(machine) == 20
    human = test[test["label"] == "human"]
    assert human["language"].value_counts().to_dict() == machine["language"].value_counts().to_dict()
    assert (test["subset"] == "BigCode").all()
    assert "BigCode" not in set(tables["train"]["family"])
    _check_disjoint(tables)


def test_leave_one_language_out(trial):
    tables = ood.leave_one_language_out(trial, "Java", seed=0)
    assert set(tables["test"]["language"]) == {"Java"} and (tables["test"]["subset"] == "Java").all()
    assert "Java" not in set(tables["train"]["language"]) | set(tables["validation"]["language"])
    _check_disjoint(tables)
    with pytest.raises(AicdError):
        ood.leave_one_language_out(trial, "Rust")


def test_splits_are_seeded(trial):
    a = ood.leave_one_family_out(trial, "Phi", seed=1)
    b = ood.leave_one_family_out(trial, "Phi", seed=1)
    c = ood.leave_one_family_out(trial, "Phi", seed=2)
    for name in ("train", "validation", "test"):
        assert a[name]["id"].tolist() == b[name]["id"].tolist()
    assert set(a["test"]["id"]) != set(c["test"]["id"])


def test_in_distribution_is_stratified_and_covers_every_row(trial):
    tables = ood.in_distribution(trial, seed=0)
    _check_disjoint(tables)
    assert sum(len(t) for t in tables.values()) == len(trial)
    share = len(tables["test"]) / len(trial)
    assert 0.15 < share < 0.25
    assert set(tables["test"]["subset"]) == {"Python", "Java", "C++"}


def test_codeaid_rows_keep_the_nine_languages_only(trial):
    raw = pd.DataFrame({
        "code": ["a", "b", "c", "d"], "label": ["human", "machine", "machine", "human"],
        "generator": ["human", "gpt-4", "gpt-4", "human"], "language": ["JavaScript", "TypeScript", "Go", "PHP"],
        "problem_id": [1, 1, 2, 2],
    })
    rows = ood.codeaid_samples(raw)
    assert rows["language"].tolist() == ["JavaScript", "Go", "PHP"]
    assert rows["family"].tolist() == ["human", "OpenAI", "human"]
    tables = ood.codeaid(trial, rows, seed=0)
    assert tables["test"]["subset"].tolist() == ["JavaScript", "Go", "PHP"]
    assert len(tables["train"]) + len(tables["validation"]) == len(trial)


def test_all_splits_names(trial):
    names = list(ood.all_splits(trial, None, seed=0))
    assert names[0] == "in_distribution" and "lolo:C++" in names and "lofo:DeepSeek-AI" in names
    assert len(names) == 1 + 3 + 6


def test_real_trial_data_families(trial_path):
    real = ood.trial_samples(pd.read_parquet(trial_path))
    assert (real["label"] == "human").sum() == 2971
    assert ood.largest_families(real) == ["Meta-Llama", "Qwen", "Phi", "01-ai", "BigCode", "DeepSeek-AI"]


def test_ood_table_writes_md_and_tex(tmp_path):
    from aicd.report.ood import records_from_results, write_tables

    results = {
        "tfidf_lr": {"lofo:Qwen": {"macro_f1": 0.7, "ci": [0.6, 0.8]}, "in_distribution": {"macro_f1": 0.9, "ci": [0.88, 0.92]},
                     "lofo:Phi": {"macro_f1": 0.8, "ci": [0.7, 0.9]}},
        "robust": {"in_distribution": {"macro_f1": 0.95, "ci": [0.93, 0.97]}},
    }
    md, tex = write_tables(records_from_results(results), tmp_path / "tables" / "ood.md", tmp_path / "tables" / "ood.tex")
    text = md.read_text()
    assert text.splitlines()[0].startswith("| detector | in_distribution | lofo:Phi | lofo:Qwen | LOFO mean | LOFO min |")
    assert "| tfidf_lr | 90.0 [88.0, 92.0] | 80.0 [70.0, 90.0] | 70.0 [60.0, 80.0] | 75.0 | 70.0 |" in text
    assert r"lofo:Phi" in tex.read_text() and r"\toprule" in tex.read_text()
    # robust lacks both LOFO splits: blank group cells, not a mean over fewer splits
    assert "| robust | 95.0 [93.0, 97.0] |  |  |  |  |" in text


def test_ood_table_group_stats_need_every_split_and_a_missing_interval_stays_missing(tmp_path):
    from aicd.report.ood import records_from_results, write_tables

    results = {"a": {"lolo:Python": {"macro_f1": 0.7, "ci": None}, "lolo:Java": {"macro_f1": 0.9, "ci": [0.8, 1.0]}},
               "b": {"lolo:Java": {"macro_f1": 0.5, "ci": [0.4, 0.6]}}}
    md, _ = write_tables(records_from_results(results), tmp_path / "ood.md", tmp_path / "ood.tex")
    text = md.read_text()
    assert "| a | 90.0 [80.0, 100.0] | 70.0 | 80.0 | 70.0 |" in text  # no "[70.0, 70.0]"
    assert "| b | 50.0 [40.0, 60.0] |  |  |  |" in text  # b has no Python split: no LOLO mean/min


def test_rows_without_code_are_left_out_and_counted(caplog):
    import logging

    raw = pd.DataFrame({"code": ["print(1)\n", None, "  ", "int main(){}\n"], "generator": ["human", "gpt-4o", "human", "Qwen"],
                        "language": ["python", "python", "python", "cpp"]})
    with caplog.at_level(logging.WARNING, logger="aicd.splits"):
        out = ood.trial_samples(raw)
    assert len(out) == 2 and "None" not in set(out["code"])
    assert "trial: 2 of 4 rows have no code" in caplog.text


def test_largest_families_break_ties_by_name_not_row_order():
    rows = pd.DataFrame({"label": "machine", "family": ["B", "A", "C", "C"]})
    assert ood.largest_families(rows, 2) == ["C", "A"]
    assert ood.largest_families(rows.iloc[::-1], 2) == ["C", "A"]
