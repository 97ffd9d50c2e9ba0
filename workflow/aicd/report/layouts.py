"""What each report job is told about the run besides its input files: the tasks, detectors and
judges it shows, their titles and the paper's rows they stand for. One function per job, each a
pure function of the plan (an aicd.plan.Plan; workflow/rules/common.smk passes `PLAN`), passed
to `python -m aicd.report SUBCOMMAND --layout` as JSON."""

from __future__ import annotations

from .. import published
from ..common.defaults import schema_default


def report_layout(plan, models: dict | None = None) -> dict:
    """rule report: Table 4's columns and rows, the extra test sets, the provisional label maps,
    and which of the run's models (registry `models`) answer differently with another batch."""
    return {
        "batch_dependent": batch_dependent_models(plan, models or {}),
        "tasks": [[t, task.title] for t, task in plan.tasks.items()],
        "detectors": [[d, det.title, det.dummy] for d, det in plan.detectors.items()],
        "provisional": {t: plan.config["tasks"][t]["label_map_provisional"] for t in plan.tasks
                        if "label_map_provisional" in plan.config["tasks"][t]},
        # perturbed sets are not Table 4 columns: the OOD table gives their flip rates
        "test_sets": [[t, s, spec.get("title", s)] for t, task in plan.tasks.items()
                      for s, spec in task.test_sets.items() if "perturbation" not in spec],
        "paper_rows": plan.paper_rows(),  # the others are marked as ours
        "task_modes": {t: task.mode for t, task in plan.tasks.items()},  # the report's data block
    }


def batch_dependent_models(plan, models: dict) -> list[str]:
    """The run's generators and judge models whose greedy answers depend on their batch, so that
    two fresh runs differ (aicd.llm.engines.batch_dependent)."""
    from ..llm.engines import batch_dependent

    used = {*plan.generators, *([plan.instructor] if plan.instructor else []),
            *(j["model"] for j in plan.judges.values())}
    return sorted(m for m in used if m in models and batch_dependent(models[m]))


def subset_tables_layout(plan) -> dict:
    """rule subset_tables: Tables 5-7, each on the first task of its kind."""
    tables = {}
    for paper_task in published.PAPER_TASKS:
        number = paper_task.subset_table
        task = next((t for t, spec in plan.tasks.items() if spec.kind == paper_task.kind), None)
        detectors, over, ours = [], "paper", []
        if task:
            detectors, over = plan.averaged(task)
            ours = [d for d in plan.trained(task) if d not in detectors]
        tables[str(number)] = {"task": task, "labels": list(plan.tasks[task].labels) if task else [],
                               "detectors": detectors, "averaged_over": over, "ours": ours}
    return {"tables": tables, "titles": {d: det.title for d, det in plan.detectors.items()}}


def reproduction_layout(plan) -> dict:
    """rule reproduction: tasks and their kinds, which detector is which of the paper's Table 4
    rows, and which judge (score file name) is which Table 8 row."""
    rows = plan.paper_rows()
    judging = plan.config.get("judging") or {}
    specs = judging.get("judges") or {}
    judges = [[published.judge_detector(j, m), published.match_judge(str((specs.get(j) or {}).get("model", "")), m),
               f"{(specs.get(j) or {}).get('title', j)} ({m})"] for j in plan.judges for m in plan.modes]
    return {"tasks": [[t, task.title, task.kind] for t, task in plan.tasks.items()],
            "task_modes": [[t, task.title, task.kind, task.mode] for t, task in plan.tasks.items()],
            "detectors": [[d, det.title, rows.get(d)] for d, det in plan.detectors.items()],
            "dummies": [d for d, det in plan.detectors.items() if det.dummy],
            "comparability": {d: published.comparability({"paper": det.paper}) for d, det in plan.detectors.items()
                              if det.paper},
            "judges": judges}


def figures_layout(plan) -> dict:
    """rule paper_figures."""
    return {"tasks": [[t, task.title, list(task.labels)] for t, task in plan.tasks.items()],
            "detectors": [[d, det.title, det.dummy] for d, det in plan.detectors.items()]}


def paper_layout(plan) -> dict:
    """rule paper_section."""
    keys = ("kind", "title", "features", "params", "paper")
    return {"detectors": {d: {k: plan.config["detectors"][d][k] for k in keys if k in plan.config["detectors"][d]}
                          for d in plan.detectors},
            "tasks": {t: task.title for t, task in plan.tasks.items()},
            "kinds": {t: task.kind for t, task in plan.tasks.items()}}


def table8_layout(plan, hint: str = "") -> dict:
    """rule table8: every configured judge, planned or not (a judge without an endpoint is a row
    that says so, with `hint`)."""
    judging = plan.config.get("judging") or {}
    return {"tasks": [[t, plan.tasks[t].title] for t in (plan.judge_tasks or _all_judge_tasks(plan))],
            "judges": [[j, s["title"], published.match_judge(str(s.get("model", "")), "zs")
                        or published.match_judge(str(s.get("model", "")), "cot")]
                       for j, s in (judging.get("judges") or {}).items()],
            "modes": list(plan.modes or judging.get("modes", [])), "hint": hint}


def _all_judge_tasks(plan) -> tuple:
    judging = plan.config.get("judging") or {}
    every = judging.get("tasks", schema_default("judging.tasks")) == "all"
    return tuple(plan.tasks) if every else tuple(judging["tasks"])


def ood_layout(plan) -> dict:
    """rule ood_table: each OOD task's split name (a column), the detectors' titles, and each
    split's perturbed test sets."""
    return {"splits": {t: ood_split_name(plan.tasks[t].ood) for t in plan.ood_tasks()},
            "detectors": {d: det.title for d, det in plan.detectors.items()},
            "perturbations": {t: {s: spec["perturbation"] for s, spec in plan.tasks[t].test_sets.items()
                                  if "perturbation" in spec} for t in plan.ood_tasks()}}


def loco_layout(plan) -> dict:
    """rule loco_table: each fold's held-out collection, the detectors' titles."""
    return {"folds": {t: plan.tasks[t].ood["hold_out"] for t in plan.loco_tasks()},
            "order": [plan.tasks[t].ood["hold_out"] for t in plan.loco_tasks()],  # the config's (JSON sorts keys)
            "detectors": {d: det.title for d, det in plan.detectors.items()}}


def ood_split_name(spec: dict) -> str:
    """in_distribution | codeaid | lolo:<language> | lofo:<family> (the OOD table's columns)."""
    short = {"leave_one_language_out": "lolo", "leave_one_family_out": "lofo"}
    protocol = spec["protocol"]
    return f"{short[protocol]}:{spec['hold_out']}" if protocol in short else protocol
