"""A source whose every row is unusable, through the real snakemake: the stages before the
split write valid empty outputs with their reports, and the split stops with one `error:`
line that says where the rows went (it used to fail with a pandas traceback)."""

from __future__ import annotations

import pandas as pd
import pytest
import yaml

from workflow.test_demo_workflow import run

pytestmark = pytest.mark.workflow


def test_a_source_without_usable_code_stops_at_the_split_with_one_clear_line(tmp_path, repo, trial_raw):
    nulls = trial_raw.head(30).assign(code=None)
    nulls.to_parquet(tmp_path / "nulls.parquet")
    override = {"sources": {"trial": {"files": str(tmp_path / "nulls.parquet")}},
                "dataset": {"sources": ["trial"]}, "execution": {"sources": [], "generations": False}}
    (tmp_path / "override.yaml").write_text(yaml.safe_dump(override))
    proc = run(repo, tmp_path, "results/tasks/binary/report.json", check=False)
    assert proc.returncode != 0
    results = tmp_path / "results"
    assert len(pd.read_parquet(results / "sources" / "trial.parquet")) == 0
    assert yaml.safe_load((results / "dataset" / "filter_report.json").read_text())["rows_in"] == 0
    log = (results / "logs" / "task_split" / "binary.log").read_text().strip().splitlines()
    assert log[-1] == ("error: task binary: results/dataset/pool.parquet has no rows, so there is nothing to split; "
                       "every input row was rejected or removed: see filter_report.md beside it and each source's "
                       "report (results/sources/*.report.json)")
    assert "Traceback" not in "\n".join(log)
