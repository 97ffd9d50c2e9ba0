"""The paper's facts, read from published.yaml beside this module: its three tasks (PAPER_TASKS:
task kind <-> "Task N" <-> Table 4/8 column <-> subset table <-> figures <-> the version of our
definition), the naming of the LLM judges' predictions (judge_detector), its published numbers
(Tables 4-8) and which detector of a configuration each of the paper's rows is. Every other
module asks here (tests/unit/published/test_published.py greps for a second home).

A value here is as the paper prints it (`scale` 100 for Tables 4 and 8, 1 for Tables 5-7);
`points(value, scale)` puts any of them on the macro-F1 x 100 scale the comparison uses."""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import yaml

from .common.defaults import schema_default

PUBLISHED = Path(__file__).resolve().parent / "published.yaml"


@dataclass(frozen=True)
class PaperTask:
    kind: str                 # what a config's build.kind names: binary | family | fine_grained
    number: int               # the paper's "Task N"
    column: str               # its column in Tables 4 and 8 (T1, T2, T3)
    title: str                # the paper's name for it
    subset_table: int         # its table of test subsets (5, 6 or 7)
    subsets: tuple            # what those subsets are cut by (language, domain, generator, source)
    figures: dict             # our figure (confusion_best, confusion_all, language, subsets) -> the paper's number
    fractions: dict           # split fractions of its in-distribution rows
    version: int              # the version of our definition of it (published.yaml)

    @property
    def name(self) -> str:
        """How the paper names it: "Task 1"."""
        return f"Task {self.number}"


@dataclass(frozen=True)
class PaperRow:
    table: int
    row: str                  # our name for the row (Table 4's detector title, a subset, a judge)
    printed: str              # the row's label as the paper's text prints it
    match: dict               # which configured detector it is (empty for Tables 5-7)
    values: dict              # column -> value as printed


@lru_cache(maxsize=1)
def _data() -> dict:
    return yaml.safe_load(PUBLISHED.read_text())


def _tasks() -> tuple[PaperTask, ...]:
    return tuple(PaperTask(kind=kind, number=int(t["number"]), column=t["column"], title=t["title"],
                           subset_table=int(t["subset_table"]), subsets=tuple(t["subsets"]), figures=dict(t["figures"]),
                           fractions=dict(t["fractions"]), version=int(t["version"]))
                 for kind, t in _data()["tasks"].items())


PAPER_TASKS = _tasks()
TASK_KINDS = tuple(t.kind for t in PAPER_TASKS)
SUBSET_TABLES = tuple(t.subset_table for t in PAPER_TASKS)
JUDGE_PREFIX = _data()["judge_prefix"]


def paper_task(kind: str) -> PaperTask:
    """The paper's task of a kind (a KeyError names an unknown one)."""
    for task in PAPER_TASKS:
        if task.kind == kind:
            return task
    raise KeyError(f"{kind!r} is not one of the paper's task kinds ({', '.join(TASK_KINDS)})")


def task_names(kinds) -> str:
    """How the paper names several of its tasks: "Tasks 1 and 3" (one: "Task 2")."""
    numbers = [str(t.number) for t in PAPER_TASKS if t.kind in set(kinds)]
    if len(numbers) == 1:
        return f"Task {numbers[0]}"
    return f"Tasks {', '.join(numbers[:-1])} and {numbers[-1]}"


def family_tasks() -> tuple[str, str]:
    """(the task whose classes are the model families, the tasks a model's code enters whatever
    its family), as the paper names them: ("Task 2", "Tasks 1 and 3")."""
    return task_names(["family"]), task_names([t.kind for t in PAPER_TASKS if t.kind != "family"])


def judge_detector(judge: str, mode: str) -> str:
    """The detector name of a judge's predictions in one prompting mode: judge_{judge}_{mode}."""
    return f"{JUDGE_PREFIX}{judge}_{mode}"


def parse_judge_detector(name: str) -> tuple[str, str] | None:
    """(judge, mode) of a judge detector's name, or None for any other name."""
    if not str(name).startswith(JUDGE_PREFIX) or "_" not in name[len(JUDGE_PREFIX):]:
        return None
    judge, mode = name[len(JUDGE_PREFIX):].rsplit("_", 1)
    return judge, mode


def judge_row(name: str) -> str:
    """A judge detector's name without the prefix (judge_mode: a Table 8 row's key)."""
    return str(name).removeprefix(JUDGE_PREFIX)


def _columns(spec: dict) -> dict:
    """A table's columns, one per paper task where it says `tasks`."""
    if spec.get("columns") != "tasks":
        return spec["columns"]
    return {t.column: {"printed": t.name, "task_kind": t.kind} for t in PAPER_TASKS}


def load() -> dict:
    """published.yaml's tables, keyed by number, with their columns spelled out (a subset
    table's `task_kind` from the task it stands for)."""
    out = {}
    for number, spec in _data()["tables"].items():
        kind = next((t.kind for t in PAPER_TASKS if t.subset_table == int(number)), None)
        out[int(number)] = {**spec, "columns": _columns(spec), **({"task_kind": kind} if kind else {})}
    return out


def release() -> dict:
    """The release the paper evaluates on: {hub, test_rows: {task kind: rows}}."""
    return _data()["release"]


def table(number: int) -> dict:
    return load()[number]


def rows(number: int) -> list[PaperRow]:
    return [PaperRow(number, r["row"], r["printed"], dict(r.get("match") or {}), dict(r["values"]))
            for r in table(number)["rows"]]


def points(value: float, scale: float) -> float:
    """A printed value on the macro-F1 x 100 scale."""
    return float(value) * 100.0 / float(scale)


def column_for_kind(number: int, task_kind: str) -> str | None:
    """Table 4's or 8's column (T1, T2, T3) for a task kind, or None."""
    for name, col in table(number)["columns"].items():
        if col.get("task_kind") == task_kind:
            return name
    return None


def subset_table_for_kind(task_kind: str) -> int | None:
    """The subset table (5, 6 or 7) that stands for a task kind."""
    return next((t.subset_table for t in PAPER_TASKS if t.kind == task_kind), None)


def is_match(entry: dict, match: dict) -> bool:
    """Is the configured detector `entry` ({kind, features, params: {model}}) the paper's row?
    `match.any_of` lists alternatives (Fast-DetectGPT: its own kind, or the zero-shot panel's
    fast_detectgpt criterion); `match.criterion` is the panel's criterion parameter."""
    if match and "any_of" in match:
        return any(is_match(entry, alt) for alt in match["any_of"])
    if not match or entry.get("kind") != match.get("kind"):
        return False
    if "criterion" in match and (entry.get("params") or {}).get("criterion") != match["criterion"]:
        return False
    if "features" in match and entry.get("features") != match["features"]:
        return False
    if "model" in match and (entry.get("params") or {}).get("model") != match["model"]:
        return False
    return True


def match_detectors(detectors: dict[str, dict]) -> dict[str, str]:
    """configured detector name -> the Table 4 row it is: the row its `paper.row` names, else
    the first configured match per row by kind, features and model."""
    from .common.errors import AicdError

    names = [r.row for r in rows(4)]
    out = {}
    for name, entry in detectors.items():
        row = (entry.get("paper") or {}).get("row")
        if row is not None and row not in names:
            raise AicdError(f"detector {name}: paper.row {row!r} is not a row of the paper's Table 4 "
                            f"(its rows: {', '.join(names)})")
        if row is not None and row in out.values():
            raise AicdError(f"detector {name}: paper.row {row!r} is already another detector's row")
        if row is not None:
            out[name] = row
    for paper_row in rows(4):
        if paper_row.row in out.values():
            continue
        for name, entry in detectors.items():
            if name not in out and "row" not in (entry.get("paper") or {}) and is_match(entry, paper_row.match):
                out[name] = paper_row.row
                break
    return out


def comparability(entry: dict) -> dict:
    """How a configured detector stands beside its paper row: {comparable, note} from its
    `paper` key (comparable unless it says otherwise; the note says what differs, and is the
    reason where it is not comparable)."""
    paper = entry.get("paper") or {}
    return {"comparable": bool(paper.get("comparable", schema_default("definitions.detector.paper.comparable"))),
            "note": paper.get("note")}


def match_judge(model: str, mode: str) -> str | None:
    """The Table 8 row of a judge (its model id, its prompting mode), or None."""
    for paper_row in rows(8):
        if model.startswith(paper_row.match["judge_model"]) and mode == paper_row.match["mode"]:
            return paper_row.row
    return None
