# Generic helpers of the Snakemake layer (no knowledge of AICD Bench): environments, shell
# arguments, wildcard constraints, paths.

import json
import re
import shlex


def env(name):
    """The conda environment of a rule group (envs/{name}.yaml)."""
    return os.path.join(workflow.basedir, "envs", f"{name}.yaml")


def repo_path(path):
    """Config paths to shipped files (registry, prompts) are relative to the repository."""
    return path if os.path.isabs(path) else os.path.join(workflow.basedir, path)


def as_arg(obj):
    """A config slice as one shell-quoted JSON argument (sorted keys: stable across runs)."""
    return shlex.quote(json.dumps(obj, sort_keys=True))


def config_slice(entry, keys):
    """The part of a config entry a job's output depends on (titles and the like excluded,
    so renaming a table row reruns the report, not the detector)."""
    return {k: entry[k] for k in keys if k in entry}


def one_of(names):
    """A wildcard constraint matching exactly these names (an empty list matches nothing)."""
    return "|".join(re.escape(n) for n in names) or "(?!)"


def none_of(names):
    """Any name but these (a short list: a constraint listing every detector would cost
    O(detectors) per file when 1,000 detectors are planned)."""
    if not names:
        return r"[A-Za-z0-9_-]+"
    return r"(?!(?:" + "|".join(re.escape(n) for n in names) + r")(?![A-Za-z0-9_-]))[A-Za-z0-9_-]+"


def parent(path):
    """The folder of a declared output, for stages that write several files beside it."""
    return os.path.dirname(str(path))


def folder_of(paths):
    """The one folder a list of declared files shares, for a stage that reads or writes them there
    by name (a list spread over several folders is a mistake in the rule)."""
    folders = {os.path.dirname(str(p)) for p in paths}
    if len(folders) != 1:
        raise ValueError(f"expected files in one folder, got {sorted(folders)}")
    return folders.pop()


def labels_arg(labels):
    return " ".join(shlex.quote(c) for c in labels)
