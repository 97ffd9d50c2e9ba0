"""Every file the workflow writes, named once: the layout of a run's results folder.

`Outputs(root)` is that layout under one root: the run's own results folder (`RESULTS` in the
rule files), or the root a run on a base reads a file from (`DATA`, `made_by(task, detector)`:
aicd.records.baserun). Each kind of output is one method; its arguments are the output's
wildcards and default to Snakemake's `{name}`, so the same method gives a rule its output
pattern and an input function its concrete file:

    Outputs("results").predictions()              # results/predictions/{task}/{detector}.parquet
    Outputs("results").predictions("binary", "lr_tfidf")

The rule files and their input functions (workflow/rules/*.smk), the package's modules and the
benchmark scripts ask here and spell no path of their own (tests/unit/outputs/test_outputs.py): a stage
given the folder its files lie in names them with `beside(folder, kind, ...)`, help and messages
show the user a file with SHOWN (under the default root) or ANY_ROOT (RESULTS/...), and a path is
read back into its kind and wildcards by `parse` / `wildcards_of` alone. docs/results.md says what
each file holds. A job's log and benchmark follow one scheme: `log(rule, *names)`,
`benchmark(rule, *names)`."""

from __future__ import annotations

import inspect
import re
from dataclasses import dataclass

from .common.errors import AicdError

FITTED_SUFFIX = ".skops"  # a fitted model or featurizer stored as one file (aicd.models.fitted_files)


def wildcard(name: str) -> str:
    """Snakemake's wildcard `{name}`."""
    return "{" + name + "}"


TASK, DETECTOR, FEATURESET, TEST_SET = (wildcard(n) for n in ("task", "detector", "featureset", "test_set"))


@dataclass(frozen=True)
class Outputs:
    root: str

    def __post_init__(self) -> None:
        object.__setattr__(self, "root", str(self.root).rstrip("/"))

    def under(self, relative: str) -> str:
        """A file a kind names relative to the results folder (a detector's prepared inputs)."""
        return f"{self.root}/{relative}"

    # ------------------------------------------------------------ jobs' logs and benchmarks

    def log(self, rule: str, *names: str, suffix: str = ".log") -> str:
        """results/logs/{rule}/{names...}{suffix}; a second log of a job (its server's) by suffix."""
        return f"{self.root}/logs/{'/'.join((rule, *names))}{suffix}"

    def benchmark(self, rule: str, *names: str) -> str:
        return f"{self.root}/benchmarks/{'/'.join((rule, *names))}.tsv"

    # ------------------------------------------------------------ the run's records

    def inputs(self) -> str:
        """The input fingerprint (aicd.records.fingerprint)."""
        return f"{self.root}/inputs.json"

    def run_record(self) -> str:
        """Which run owns the root: its config files and base (aicd.records.runs)."""
        return f"{self.root}/run.json"

    def run_config(self) -> str:
        """The run's validated config, as a run on this base reads it (aicd.records.baserun)."""
        return f"{self.root}/run_config.yaml"

    def resolved(self) -> str:
        """What the machine offered the first plan, kept so later plans match (aicd.resolve)."""
        return f"{self.root}/resolved.json"

    # ------------------------------------------------------------ sources, generation, execution

    def table(self, kind: str = "{kind}", name: str = "{name}") -> str:
        """A table the dataset stage normalizes: sources/, generations/ or execution/{name}.parquet."""
        return f"{self.root}/{kind}/{name}.parquet"

    def source(self, source: str = "{source}") -> str:
        return self.table("sources", source)

    def source_report(self, source: str = "{source}") -> str:
        return f"{self.root}/sources/{source}.report.json"

    def instructions(self) -> str:
        return f"{self.root}/instructions/instructions.parquet"

    def generations(self, model: str = "{model}") -> str:
        return self.table("generations", model)

    def generations_report(self, model: str = "{model}") -> str:
        return f"{self.root}/generations/{model}.report.json"

    def generation_summary(self, ext: str) -> str:
        """The generation stage's report (json, md)."""
        return f"{self.root}/generations/report.{ext}"

    def generator_card(self, ext: str, model: str = "{model}") -> str:
        return f"{self.root}/generators/{model}.{ext}"

    def sandbox_image(self) -> str:
        return f"{self.root}/sandbox/image.txt"

    def execution(self, name: str = "{name}") -> str:
        return self.table("execution", name)

    def execution_report(self, name: str = "{name}") -> str:
        return f"{self.root}/execution/{name}.report.json"

    def execution_summary(self) -> str:
        return f"{self.root}/execution/report.md"

    # ------------------------------------------------------------ the dataset

    def normalized(self, kind: str = "{kind}", name: str = "{name}") -> str:
        return f"{self.root}/dataset/normalized/{kind}/{name}.parquet"

    def normalized_report(self, kind: str = "{kind}", name: str = "{name}") -> str:
        return f"{self.root}/dataset/normalized/{kind}/{name}.report.json"

    def pool(self) -> str:
        return f"{self.root}/dataset/pool.parquet"

    def dataset_report(self, name: str, ext: str) -> str:
        """The pool's filter_report or dedup_report (json, md)."""
        return f"{self.root}/dataset/{name}.{ext}"

    def dataset_card(self) -> str:
        return f"{self.root}/dataset/README.md"

    def dataset_counts(self) -> str:
        return f"{self.root}/dataset/counts.csv"

    # ------------------------------------------------------------ tasks

    def split(self, task: str = TASK, split: str = "{split}") -> str:
        return f"{self.root}/tasks/{task}/{split}.parquet"

    def task_report(self, task: str = TASK) -> str:
        return f"{self.root}/tasks/{task}/report.json"

    def test_set(self, task: str = TASK, test_set: str = TEST_SET) -> str:
        return f"{self.root}/tasks/{task}/test_sets/{test_set}.parquet"

    def test_set_report(self, task: str = TASK, test_set: str = TEST_SET) -> str:
        return f"{self.root}/tasks/{task}/test_sets/{test_set}.report.json"

    def langid_cache(self, task: str = TASK) -> str:
        return f"{self.root}/cache/langid/{task}"

    # ------------------------------------------------------------ features, models, predictions

    def features_dir(self, task: str = TASK, featureset: str = FEATURESET) -> str:
        return f"{self.root}/features/{task}/{featureset}"

    def features(self, task: str = TASK, featureset: str = FEATURESET) -> str:
        return f"{self.features_dir(task, featureset)}/features.npz"

    def featurizer(self, task: str = TASK, featureset: str = FEATURESET) -> str:
        return f"{self.features_dir(task, featureset)}/featurizer{FITTED_SUFFIX}"

    def features_report(self, task: str = TASK, featureset: str = FEATURESET) -> str:
        return f"{self.features_dir(task, featureset)}/report.json"

    def features_cache(self) -> str:
        return f"{self.root}/cache/features"

    def benchmark_cache(self, name: str) -> str:
        """A benchmark script's own cache (benchmarks/), kept between its runs."""
        return f"{self.root}/cache/benchmarks/{name}"

    def lm(self, detector: str = DETECTOR) -> str:
        """The causal LM trained for a detector (a folder)."""
        return f"{self.root}/lm/{detector}"

    def lm_report(self, detector: str = DETECTOR) -> str:
        """The trained LM's own record (its data, held-out loss), inside its folder."""
        return f"{self.lm(detector)}/lm.json"

    def model(self, task: str = TASK, detector: str = DETECTOR) -> str:
        """A fitted detector stored as a file (its kind's storage)."""
        return f"{self.model_folder(task, detector)}{FITTED_SUFFIX}"

    def model_folder(self, task: str = TASK, detector: str = DETECTOR) -> str:
        """A fitted detector stored as a folder (its kind's storage)."""
        return f"{self.root}/models/{task}/{detector}"

    def model_report(self, task: str = TASK, detector: str = DETECTOR) -> str:
        return f"{self.root}/models/{task}/{detector}.json"

    def checkpoints(self, task: str = TASK, detector: str = DETECTOR) -> str:
        return f"{self.root}/checkpoints/{task}/{detector}"

    def token_cache(self, task: str = TASK) -> str:
        return f"{self.root}/cache/tokens/{task}"

    def predictions(self, task: str = TASK, detector: str = DETECTOR) -> str:
        return f"{self.root}/predictions/{task}/{detector}.parquet"

    def validation_scores(self, task: str = TASK, detector: str = DETECTOR) -> str:
        return f"{self.root}/validation_scores/{task}/{detector}.parquet"

    def test_set_predictions(self, task: str = TASK, test_set: str = TEST_SET, detector: str = DETECTOR) -> str:
        return f"{self.root}/predictions/{task}/test_sets/{test_set}/{detector}.parquet"

    def judge_report(self, task: str = TASK, judge: str = "{judge}", mode: str = "{mode}") -> str:
        return f"{self.root}/judges/{task}/{judge}_{mode}.report.json"

    # ------------------------------------------------------------ scores and calibration

    def scores(self, task: str = TASK, detector: str = DETECTOR) -> str:
        return f"{self.root}/scores/{task}/{detector}.json"

    def test_set_scores(self, task: str = TASK, test_set: str = TEST_SET, detector: str = DETECTOR) -> str:
        return f"{self.root}/scores/{task}/test_sets/{test_set}/{detector}.json"

    def reference(self, task: str = TASK) -> str:
        """A task's human reference code for calibration."""
        return f"{self.root}/calibration/{task}/reference.parquet"

    def reference_report(self, task: str = TASK) -> str:
        return f"{self.root}/calibration/{task}/reference.report.json"

    def calibration(self, task: str = TASK, detector: str = DETECTOR) -> str:
        return f"{self.root}/calibration/{task}/{detector}.json"

    def calibration_view(self, task: str = TASK, detector: str = DETECTOR) -> str:
        return f"{self.root}/calibration/{task}/{detector}.test.json"

    # ------------------------------------------------------------ tables, figures, reports

    def tables_dir(self) -> str:
        return f"{self.root}/tables"

    def tab(self, name: str, ext: str) -> str:
        """A table: results/tables/{name}.{ext} (table4.md, reproduction.json, ...)."""
        return f"{self.tables_dir()}/{name}.{ext}"

    def figures_dir(self) -> str:
        return f"{self.root}/figures"

    def figure(self, name: str, ext: str) -> str:
        return f"{self.figures_dir()}/{name}.{ext}"

    def shap_figure(self, ext: str, task: str = TASK, detector: str = DETECTOR) -> str:
        """A SHAP analysis's figure: with the figures, not beside its analysis."""
        return self.figure(f"shap_{task}_{detector}", ext)

    def analysis(self, name: str, ext: str, task: str = TASK) -> str:
        """One of the paper's analyses of a task (svm_ngrams.md, shap_{detector}.json, ...)."""
        return f"{self.root}/analyses/{task}/{name}.{ext}"

    def analyses(self, task: str = TASK) -> str:
        """The paper's analyses of a task: their summary, naming the others beside it."""
        return self.analysis("summary", "json", task)

    def report(self) -> str:
        return f"{self.root}/report.md"

    def paper_results(self) -> str:
        return f"{self.root}/paper_results.md"


# The layout under the config's default root, and under any root (RESULTS/models/TASK/...), for
# help and messages that show the user a file.
SHOWN = Outputs("results")
ANY_ROOT = Outputs("RESULTS")


def beside(folder, kind, *args: str) -> str:
    """The file of `kind` (an Outputs method, with its arguments) in `folder`: for a stage given the
    folder its kind lies in (results/dataset, results/tables), so its files keep the layout's names."""
    return f"{str(folder).rstrip('/')}/{name_of(kind, *args)}"


def _under_root(kind, *args: str) -> str:
    """A kind (an Outputs method or its name) under the root ROOT."""
    return (getattr(Outputs("ROOT"), kind) if isinstance(kind, str) else kind.__get__(Outputs("ROOT")))(*args)


def name_of(kind, *args: str) -> str:
    """The file name alone of a kind (summary.json; table8.md for tab("table8", "md"))."""
    return _under_root(kind, *args).rsplit("/", 1)[1]


def relative(kind, *args: str, glob: bool = False) -> str:
    """A kind's path relative to its root (scores/{task}/{detector}.json); with glob, its
    wildcards as `*` (scores/*/*.json): what `aicd verify` compares of two roots."""
    path = _under_root(kind, *args)[len("ROOT/"):]
    # any name with any extension is any file: tables/* (a table without one is still compared)
    return re.sub(r"\{\w+\}", "*", path).replace("*.*", "*") if glob else path


def folder_of(kind, *args: str) -> str:
    """The top folder a kind lies in, with its slash (predictions/)."""
    return relative(kind, *args).split("/", 1)[0] + "/"


# ------------------------------------------------------------ a path back to its kind


@dataclass(frozen=True)
class Parsed:
    """What `parse` recovers of a file: its kind (the Outputs method), root and wildcards."""
    kind: str
    root: str
    wildcards: dict

    def __getattr__(self, name: str) -> str:
        """A wildcard by name (parsed.task); read from __dict__, as copy and pickle ask before it is set."""
        try:
            return self.__dict__["wildcards"][name]
        except KeyError:
            raise AttributeError(name) from None


def _patterns() -> list[tuple[int, str, re.Pattern]]:
    """(literal characters, kind, regex) of each kind whose arguments are all wildcards: the
    method's own pattern read back, so that a layout changed in its method is parsed as changed."""
    found = []
    for kind, method in inspect.getmembers(Outputs, inspect.isfunction):
        params = [p for p in inspect.signature(method).parameters.values() if p.name != "self"]
        if kind.startswith("_") or not all(isinstance(p.default, str) and p.default.startswith("{") for p in params):
            continue
        if kind == "table":  # the three tables' shared helper: any x/y.parquet would be one
            continue
        pattern = method(Outputs("ROOT"))[len("ROOT/"):]
        literal = len(re.sub(r"\{\w+\}", "", pattern))
        regex = re.sub(r"\\\{(\w+)\\\}", r"(?P<\1>[^/]+)", re.escape(pattern))
        found.append((literal, kind, re.compile(rf"(?:(?P<root>.*)/)?{regex}")))
    return sorted(found, key=lambda f: -f[0])


def parse(path, kind: str | None = None) -> Parsed | None:
    """The kind, root and wildcards of a path the layout names (of `kind` only, when given);
    None where it names none. Where two kinds fit (models/T/d.skops is a model, and a model
    folder named d.skops), the one spelling more of the path itself wins."""
    text = str(path).rstrip("/")  # a folder given with its slash
    for _, name, regex in _PATTERNS:
        m = regex.fullmatch(text) if kind in (None, name) else None
        if m:
            wildcards = {k: v for k, v in m.groupdict().items() if k != "root"}
            return Parsed(name, m.group("root") or ".", wildcards)
    return None


def wildcards_of(path, kind: str) -> Parsed:
    """`parse(path, kind)`, refused where the path is not of that kind: a stage that reads its
    task or detector off a file's path reads it from nowhere else."""
    parsed = parse(path, kind)
    if parsed is None:
        raise AicdError(f"{path}: not where the workflow writes a file of this kind ({getattr(ANY_ROOT, kind)()})")
    return parsed


_PATTERNS = _patterns()
