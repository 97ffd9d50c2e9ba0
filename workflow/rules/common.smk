# Helpers shared by all rules: config validation, the interpreter, per-wildcard config
# slices, and the (task, detector) plan.

import json
import re
import shlex
import sys

from snakemake.exceptions import WorkflowError
from snakemake_interface_executor_plugins.settings import DeploymentMethod

from snakemake.utils import min_version

min_version("9.0")

sys.path.insert(0, os.path.join(workflow.basedir, "workflow"))  # aicd, even when not pip-installed
from aicd.config import validate_config  # noqa: E402
from aicd.errors import AicdError  # noqa: E402

try:
    validate_config(config, os.path.join(workflow.basedir, "workflow", "schemas", "config.schema.yaml"))
except AicdError as err:
    raise WorkflowError(str(err)) from None

R = "results"
SPLITS = ["train", "validation", "test"]


def _leave_out_absent_optional_sources():
    """A source marked `optional: true` whose local files are not there (e.g. ../shared data
    on a machine without it) is left out of the dataset with one line, not a failed job."""
    dataset = config.get("dataset") or {}
    absent = []
    for name in list(dataset.get("sources", [])):
        spec = config.get("sources", {}).get(name, {})
        files = spec.get("files")
        if not spec.get("optional") or not files:
            continue
        paths = [files] if isinstance(files, str) else list(files)
        if not all(os.path.isfile(os.path.expanduser(p)) for p in paths):
            absent.append((name, next(p for p in paths if not os.path.isfile(os.path.expanduser(p)))))
    for name, path in absent:
        dataset["sources"].remove(name)
        print(f"Optional source {name}: {path} is not there (working directory {os.getcwd()}), so it is left out "
              f"of the dataset; set sources.{name}.files to its path to include it.", file=sys.stderr)


_leave_out_absent_optional_sources()

# With --sdm conda each rule runs in its envs/ environment, whose python has aicd installed;
# otherwise the interpreter running snakemake (the project's virtualenv) runs the stages.
# workflow/ goes on PYTHONPATH so the stages import this checkout's aicd in either case.
_INTERPRETER = (
    "python"
    if DeploymentMethod.CONDA in workflow.deployment_settings.deployment_method
    else shlex.quote(sys.executable)
)
PYTHON = f"PYTHONPATH={shlex.quote(os.path.join(workflow.basedir, 'workflow'))}${{PYTHONPATH:+:$PYTHONPATH}} {_INTERPRETER}"
ENV = os.path.join(workflow.basedir, "envs", "aicd.yaml")

wildcard_constraints:
    source=r"[A-Za-z0-9_-]+",
    task=r"[A-Za-z0-9_-]+",
    featureset=r"[A-Za-z0-9_-]+",
    detector=r"[A-Za-z0-9_-]+",


def as_arg(obj):
    """A config slice as one shell-quoted JSON argument (sorted keys: stable across runs)."""
    return shlex.quote(json.dumps(obj, sort_keys=True))


def config_slice(entry, keys):
    """The part of a config entry a job's output depends on (titles and the like excluded,
    so renaming a table row reruns the report, not the detector)."""
    return {k: entry[k] for k in keys if k in entry}


def tasks():
    return list(config["tasks"])


def detectors():
    return list(config["detectors"])


def runs_on(detector, task):
    only = config["detectors"][detector].get("tasks")
    return not only or task in only


def plan():
    """Every (task, detector) pair that Table 4 needs."""
    return [(t, d) for t in tasks() for d in detectors() if runs_on(d, t)]


def mode_of(task):
    """How a task's tables are made. A task may name both a release and a build recipe;
    `tasks_from` (release by default) picks one: release evaluation or the full build."""
    spec = config["tasks"][task]
    if "derive" in spec:
        return "derive"
    if "build" in spec and ("release" not in spec or config.get("tasks_from", "release") == "pool"):
        return "build"
    return "release"


def built_tasks():
    """Tasks cut from the dataset pool (the full build and the demo)."""
    return [t for t in tasks() if mode_of(t) == "build"]


def seed():
    return int(config["seed"])
