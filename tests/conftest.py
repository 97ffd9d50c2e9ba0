"""Shared fixtures. Tests run offline: the Hub and litellm's cost map are never fetched."""

from __future__ import annotations

import importlib.util
import os
import sys
from pathlib import Path

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("MPLBACKEND", "Agg")

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "workflow"))

TRIAL = Path(os.environ.get(
    "AICD_TRIAL_DATA",
    REPO.parent / "shared" / "data" / "semeval2026-task13-trial" / "task_a_trial_subset.parquet",
))


@pytest.fixture(scope="session")
def repo() -> Path:
    return REPO


@pytest.fixture(scope="session")
def trial_path() -> Path:
    from components import require

    require(TRIAL.is_file(), f"real-data test: the SemEval-2026 Task 13 trial subset (looked for at {TRIAL})",
            "it ships in ../shared/data beside the repository, or set AICD_TRIAL_DATA")
    return TRIAL


@pytest.fixture(scope="session")
def trial_raw(trial_path):
    import pandas as pd

    return pd.read_parquet(trial_path)


# `make test` runs the suite on pytest-xdist workers (default_workers below). Tests that share a
# session or module fixture must stay on one worker (one demo run, one classical slice, one sandbox pool, one SLURM
# cluster): the scheduler below hands out whole groups, a group being a test file, a folder of
# DIRECTORY_GROUPS, or the files of SHARED_FIXTURE_FILES. (xdist's own --dist loadgroup marks
# are ignored by pytest 9.2: pytest-dev/pytest-xdist#1386.) The slowest groups go first so the
# two workers finish together (longest first); DEVELOPERS.md, "The test suite's time", has figures.
SHARED_FIXTURE_FILES = {  # paths under tests/
    "demo_run": ("demo", ("workflow/test_demo_workflow.py", "workflow/test_test_sets.py", "workflow/test_paper_results.py",
                          "workflow/test_own_detector.py")),
    "slice_run": ("slice", ("workflow/test_reproducible_inputs.py", "workflow/test_slurm.py")),
    "slice_run_b": ("slice", ("workflow/test_reproducible_inputs.py", "workflow/test_slurm.py")),
}
DIRECTORY_GROUPS = ("sandbox", "encoders", "llm")
SLOWEST_FIRST = ("workflow/test_workflow_image.py", "slice", "demo", "sandbox", "workflow/test_llm_workflow.py",
                 "workflow/test_full_build.py", "workflow/test_same_dag.py", "workflow/test_own_detector.py", "encoders",
                 "workflow/test_minimal_config.py", "workflow/test_ood_plan.py", "workflow/test_empty_inputs.py", "llm")


def group_of(path: str) -> str:
    """The group of a test file (a path or a node id, absolute or from the repository root)."""
    path = Path(path.split("::", 1)[0])
    if path.is_absolute():
        path = path.relative_to(REPO)
    relative = path.relative_to("tests").as_posix() if path.parts[:1] == ("tests",) else path.as_posix()
    for group, files in SHARED_FIXTURE_FILES.values():
        if relative in files:
            return group
    # a folder of DIRECTORY_GROUPS directly under tests/ (tests/unit/sandbox is unit tests of
    # aicd.sandbox, one group per file like the rest of tests/unit)
    folder = Path(relative).parent.as_posix()
    return folder if folder in DIRECTORY_GROUPS else relative


def pytest_collection_modifyitems(config, items):
    for item in items:  # a new user of a shared fixture must join its group, or it would run twice
        for fixture, (group, _) in SHARED_FIXTURE_FILES.items():
            if fixture in item.fixturenames and group_of(str(item.fspath)) != group:
                raise pytest.UsageError(f"{item.nodeid} uses {fixture}: add its file to SHARED_FIXTURE_FILES"
                                        f"[{fixture!r}] in tests/conftest.py")
    rank = {group: i for i, group in enumerate(SLOWEST_FIRST)}
    items.sort(key=lambda item: rank.get(group_of(str(item.fspath)), len(rank)))  # stable within a group


# Groups that leave the CPU mostly idle or use one core: a Docker build (network and disk), the
# sandbox (container creation on vfs, wall-clock limits), single-process tests (unit, dry runs,
# lint, the encoders on one thread, the leaderboard page), the LLM client against local
# servers. The others run multi-core snakemake workflows ("heavy"). Below LANES_BELOW_CORES
# cores the last worker is a light lane: light groups first, then heavy ones from the end of the
# queue (the smallest, SLOWEST_FIRST order) but never one of LARGE_GROUPS, while the other
# worker takes heavy groups from the front; so the large workflow runs never share the machine
# with each other (DEVELOPERS.md, "The test suite's time").
LIGHT_GROUPS = ("workflow/test_workflow_image.py", "sandbox", "llm", "encoders", "workflow/test_lint.py",
                "workflow/test_same_dag.py", "workflow/test_ood_plan.py", "workflow/test_leaderboard_site.py",
                "workflow/test_rule_resources.py")
LARGE_GROUPS = ("slice", "demo", "workflow/test_llm_workflow.py")
LANES_BELOW_CORES = 4


def cores() -> int:
    """The cores this process may use (CPU affinity, as nproc counts them)."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


def default_workers() -> int:
    """`make test`'s xdist workers: half the cores (at most 4) from LANES_BELOW_CORES on, two
    (a light lane beside the workflow runs) below, one process (0) on a single core."""
    n = cores()
    return min(4, n // 2) if n >= LANES_BELOW_CORES else 2 if n >= 2 else 0


def is_light(group: str) -> bool:
    return group in LIGHT_GROUPS or group.startswith("unit/")


if importlib.util.find_spec("xdist") is not None:
    def pytest_xdist_make_scheduler(config, log):
        from xdist.scheduler import LoadScopeScheduling

        class GroupScheduling(LoadScopeScheduling):
            def _split_scope(self, nodeid: str) -> str:
                return group_of(nodeid)

            def _light_lane(self, node) -> bool:
                nodes = sorted(self.assigned_work, key=lambda n: n.gateway.id)
                return len(nodes) > 1 and cores() < LANES_BELOW_CORES and node is nodes[-1]

            def _next_scope(self, node) -> str | None:
                light = [s for s in self.workqueue if is_light(s)]
                heavy = [s for s in self.workqueue if not is_light(s)]
                if self._light_lane(node):
                    small = [s for s in heavy if s not in LARGE_GROUPS]
                    return light[0] if light else small[-1] if small else None
                return heavy[0] if heavy else light[0] if light else None

            def _assign_work_unit(self, node) -> None:
                # a lane with nothing it may take stays idle; xdist ends the session when all is done
                scope = self._next_scope(node)
                if scope is not None:
                    self.workqueue.move_to_end(scope, last=False)  # the base class pops the first unit
                    super()._assign_work_unit(node)

        return GroupScheduling(config, log)


# Nothing left behind: the controller (the xdist workers' parent, or the only process) notes the
# processes and the suite's entries of the temporary folder before the first test, marks the
# suite's processes, and fails the session on what is new after the last (tests/leftovers.py:
# how a process or a file is known to be the suite's on a shared machine). AICD_LEFTOVERS_CHECK=0
# turns the check off outside CI (another suite running at once on the same machine would show
# up in its temporary folder).
def pytest_configure(config):
    from components import in_ci

    if hasattr(config, "workerinput") or (os.environ.get("AICD_LEFTOVERS_CHECK") == "0" and not in_ci()):
        return
    from leftovers import Snapshot

    config._aicd_leftovers = Snapshot()


@pytest.hookimpl(hookwrapper=True, tryfirst=True)
def pytest_sessionfinish(session):
    yield  # after every other plugin's: xdist has stopped its workers, fixtures are torn down
    snapshot = getattr(session.config, "_aicd_leftovers", None)
    if snapshot is None:
        return
    procs, entries = snapshot.leftovers()
    if not (procs or entries):
        return
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    lines = ["the test suite left these behind (tests/leftovers.py):", *snapshot.report(procs, entries)]
    for line in lines:
        if reporter is not None:
            reporter.write_line(line, red=True)
        else:
            print(line, file=sys.stderr)
    if session.exitstatus == 0:
        session.exitstatus = 1


# Where the time goes: each group's summed test time (setup, call and teardown; a group runs on
# one worker, so the sum is its wall time there), printed after pytest's own slowest tests.
# .ci/run keeps the table in its output; DEVELOPERS.md, "The test suite's time", has the last one.
GROUP_SECONDS: dict[str, list] = {}


def pytest_runtest_logreport(report):
    entry = GROUP_SECONDS.setdefault(group_of(report.nodeid), [0.0, 0])
    entry[0] += report.duration
    entry[1] += report.when == "call"


def pytest_terminal_summary(terminalreporter):
    if not GROUP_SECONDS:
        return
    terminalreporter.section("time per test group")
    total = sum(seconds for seconds, _ in GROUP_SECONDS.values())
    for group, (seconds, tests) in sorted(GROUP_SECONDS.items(), key=lambda kv: -kv[1][0]):
        if seconds >= 1:
            terminalreporter.write_line(f"{seconds:8.1f} s  {tests:4d} tests  {group}")
    terminalreporter.write_line(f"{total:8.1f} s  {sum(t for _, t in GROUP_SECONDS.values()):4d} tests  "
                                "(summed over the groups; the workers run them side by side)")
