"""The paper-scale benchmark's projection: a fixed part that stays, growth linear beyond it,
faster only where that is measured; and what a cluster job is told to ask for."""

import importlib.util
import math
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[3] / "benchmarks" / "paper_scale.py"


@pytest.fixture(scope="module")
def ps():
    spec = importlib.util.spec_from_file_location("paper_scale_under_test", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


FRACTIONS = [0.00125, 0.0025, 0.005, 0.01]


def test_fixed_cost_and_linear_growth_project_exactly(ps):
    # 30 s of start-up plus 4,000 s per unit of F: a power law through the two largest
    # fractions alone reads exponent 0.49 there and projects ~650 s instead of 4,030 s
    points = [(f, 30 + 4000 * f) for f in FRACTIONS]
    assert ps.growth_line(points) == pytest.approx((30, 4000))
    value, k = ps.project(points, small=5.0)
    assert value == pytest.approx(4030)
    assert k is None  # linear


def test_a_constant_cost_stays_constant(ps):
    value, k = ps.project([(f, 2000.0) for f in FRACTIONS], small=0.0, floor=150.0)
    assert value == pytest.approx(2000.0) and k is None


def test_one_outlier_fraction_barely_moves_the_line(ps):
    # a normalize job's memory: the smallest fraction ran on a cold start
    points = [(0.0025, 223.0), (0.005, 493.0), (0.01, 514.0), (0.02, 525.0), (0.04, 579.0)]
    base, slope = ps.growth_line(points)
    assert 440 < base < 500 and 0 < slope < 4000
    value, _ = ps.project(points, small=0.0, floor=150.0)
    assert value == pytest.approx(min(base, 223.0) + slope)
    assert value < 4000  # a least-squares intercept capped by the outlier gave 9.6 GB


def test_measured_superlinear_growth_is_kept(ps):
    # n^1.5 beyond 1 s, dominant at every fraction: the exponent is a measurement
    points = [(f, 1 + 1e6 * f ** 1.5) for f in FRACTIONS]
    value, k = ps.project(points, small=5.0)
    assert k == pytest.approx(1.5, abs=0.01)
    assert value == pytest.approx(1 + 1e6, rel=0.02)


def test_noise_on_a_fixed_cost_is_not_extrapolated_by_its_exponent(ps):
    # a job's memory, nearly all interpreter, then a jump at the largest fraction: the jump's
    # two-point exponent (5.7) would project it to ~10^13 MB
    points = [(0.00125, 138.0), (0.0025, 140.0), (0.005, 240.0)]
    value, k = ps.project(points, small=0.0, floor=138.0)
    _base, slope = ps.growth_line(points)
    assert k is None
    assert value == pytest.approx(138.0 + slope) and slope == pytest.approx(102.0 / 0.00375)


def test_one_jump_at_the_largest_fraction_is_not_superlinear_growth(ps):
    # a CatBoost job's CPU seconds: flat, then 3.6x at the largest fraction (it shared the cores)
    points = [(0.0025, 27.23), (0.005, 22.58), (0.01, 80.37)]
    value, k = ps.project(points, small=5.0)
    assert k is None and value < 10_000  # the two-point exponent 2.4 gave 5.4 million s


def test_sublinear_measurements_are_projected_by_their_line(ps):
    points = [(0.0025, 100.0), (0.005, 120.0), (0.01, 140.0)]
    value, k = ps.project(points, small=5.0)
    assert k is None
    assert value == pytest.approx(260.0 / 3 + 16000.0 / 3)  # Theil-Sen: intercept 86.7, slope 5,333


def test_two_fractions_give_the_line_through_them(ps):
    value, k = ps.project([(0.01, 50.0), (0.02, 80.0)], small=5.0, floor=12.0)
    assert k is None and value == pytest.approx(20.0 + 3000.0)


def test_resources_round_up_with_margins_per_detector(ps):
    def job(rule, bench, rss, wall):
        return {"rule": rule, "benchmark": bench, "proj_rss_mb": rss, "node_wall_s": wall}

    lines = ps.resources_at_full_scale([
        job("detect", "results/benchmarks/detect/T1/cb_ast.tsv", 3300.0, 3600.0),
        job("detect", "results/benchmarks/detect/T3/cb_ast.tsv", 4100.0, 1000.0),
        job("task_split", "results/benchmarks/task_split/T1.tsv", 500.0, 60.0),
        job("score", "results/benchmarks/score/T1/cb_ast.tsv", math.inf, 10.0),
    ])
    rows = {line.split(" | ")[0].lstrip("| "): line.split(" | ") for line in lines if line.startswith("| ") and "---" not in line}
    # the larger memory (4,100 x 1.25 = 5,125 -> 6,000) and the longer wall (60 min x 1.5 = 90)
    assert rows["detect cb_ast"][1:] == ["2", "4,100", "6,000", "1.00", "90 |"]
    assert rows["task_split"][3] == "1,000" and rows["task_split"][5] == "30 |"  # the least asked
    assert rows["score cb_ast"][3] == "–"  # a projection that is not finite asks for nothing


def test_memory_and_cpu_come_from_the_jobs_own_meter_where_its_log_has_one(ps, tmp_path):
    bench = tmp_path / "results" / "benchmarks" / "detect" / "T1" / "lr.tsv"
    bench.parent.mkdir(parents=True)
    bench.write_text("s\th:m:s\tmax_rss\tmax_vms\tmax_uss\tmax_pss\tio_in\tio_out\tmean_load\tcpu_time\n"
                     "61.0\t0:01:01\t3.1\t0\t0\t0\t0\t0\t0\t12.0\n")
    assert ps.read_benchmark(bench) == {"wall_s": 61.0, "cpu_s": 12.0, "rss_mb": 3.1, "from": "benchmark"}
    log = tmp_path / "results" / "logs" / "detect" / "T1" / "lr.log"
    log.parent.mkdir(parents=True)
    log.write_text("INFO ...\nmemguard: job detect T1 lr: peak memory 1,234 MB summed over 3 processes, CPU 95.5 s\n")
    assert ps.read_benchmark(bench) == {"wall_s": 61.0, "cpu_s": 95.5, "rss_mb": 1234.0, "from": "memguard"}


def test_a_benchmark_reading_of_the_shell_is_no_memory_reading(ps):
    # Snakemake's file caught bash (3 MB) at one fraction: that reading is dropped, not projected
    measured = [{"rss_mb": 3.0, "from": "benchmark"}, {"rss_mb": 240.0, "from": "benchmark"},
                {"rss_mb": 10.0, "from": "benchmark"}, {"rss_mb": 250.0, "from": "benchmark"}]
    rss = ps.project_rss(measured, FRACTIONS)
    assert 250 <= rss < 2000
    assert ps.project_rss(measured[:1], FRACTIONS[:1]) == 3.0


def test_memory_that_fell_at_the_last_fraction_is_projected_at_least_at_its_peak(ps):
    measured = [{"rss_mb": v, "from": "memguard"} for v in (300.0, 500.0, 650.0, 600.0)]
    assert ps.project_rss(measured, FRACTIONS) == 650.0
    growing = [{"rss_mb": v, "from": "memguard"} for v in (300.0, 400.0, 500.0, 700.0)]
    f1, f2 = FRACTIONS[-2:]
    assert ps.project_rss(growing, FRACTIONS) == 700.0 + (700.0 - 500.0) / (f2 - f1) * (1 - f2)
