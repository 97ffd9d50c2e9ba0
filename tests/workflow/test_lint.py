"""The code passes ruff, and the Snakemake layer Snakemake's own linter and snakefmt (`make lint`,
which CI runs too)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.workflow


def test_snakemake_lint_reports_nothing(repo: Path, tmp_path: Path):
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1"}
    for config in (repo / "config" / "config.yaml", repo / "config" / "demo.yaml"):
        proc = subprocess.run([sys.executable, "-m", "snakemake", "--snakefile", str(repo / "Snakefile"),
                               "--directory", str(tmp_path), "--lint", "--configfile", str(config)],
                              capture_output=True, text=True, env=env, timeout=600)
        out = proc.stdout + proc.stderr
        assert proc.returncode == 0, out[-3000:]
        assert "Lints for" not in out, out[-3000:]
        assert "Congratulations, your workflow is in a good condition!" in out


def test_snakefmt_check_passes(repo: Path):
    snakefmt = Path(sys.executable).with_name("snakefmt")
    assert snakefmt.is_file(), "snakefmt is not installed: pip install -e '.[test]'"
    proc = subprocess.run([str(snakefmt), "--check", "."], cwd=repo, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_ruff_check_passes(repo: Path):
    ruff = Path(sys.executable).with_name("ruff")
    assert ruff.is_file(), "ruff is not installed: pip install -e '.[test]'"
    proc = subprocess.run([str(ruff), "check", "--no-cache", "."], cwd=repo, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
