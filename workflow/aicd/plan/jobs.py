"""What one job family of the plan is, decided once from the config and the kinds: a task's
tables (TaskPlan), a feature set's job (FeaturePlan), a detector's jobs (DetectorPlan), and the
builders that make them. Pure: no I/O."""

from __future__ import annotations

from dataclasses import dataclass, field

from .. import published
from ..common.defaults import schema_default
from . import resources

SPLITS = ("train", "validation", "test")


@dataclass(frozen=True)
class FeaturePlan:
    name: str
    kind: str
    parts: tuple            # a concat's parts; empty for any other kind
    spec: dict              # its config entry
    threads: int
    environment: str        # "neural" where its kind or a concat part's needs torch
    gpu: int
    mem_mb: int             # before its inputs' share
    mem_mb_per_input_mb: float
    runtime: int            # minutes
    back_projects: bool     # its columns map back onto named n-grams (its own kind's)
    named_columns: bool     # every column a named attribute (its kind's, or a part's)
    sampled: frozenset      # splits of which it (or a part) scores only a sample (lm_stats rows)

    def job_mem_mb(self, input_mb: float, attempt: int = 1) -> int:
        """What its job asks: its memory plus its inputs' share, times the attempt."""
        return int((self.mem_mb + self.mem_mb_per_input_mb * input_mb) * attempt)

    @property
    def made_of(self) -> tuple:
        """The feature sets it is made of: a concat's parts, else itself."""
        return self.parts or (self.name,)


@dataclass(frozen=True)
class DetectorPlan:
    name: str
    kind: str
    title: str
    dummy: bool
    features: str | None
    params: dict
    storage: str            # file | folder
    threads: int
    environment: str
    gpu: int
    mem_mb: int
    runtime: int            # minutes
    zero_shot: bool
    binarise: bool
    explains: str | None
    applies_to_new_code: bool
    prepared: dict          # input name -> path under results/ (another job makes it)
    tasks: tuple            # the tasks it runs on
    version: int = 1        # its kind's VERSION (written into its score files)
    samples_test: bool = False  # predicts the sample of test rows its feature set scored (lm_stats rows)
    paper: dict = field(default_factory=dict)  # the config's `paper`: row, comparable, note (aicd.published)


@dataclass(frozen=True)
class TaskPlan:
    name: str
    title: str
    mode: str               # build | derive | release | ood
    labels: tuple
    kind: str | None        # the paper's task kind (binary | family | fine_grained), where known
    source: str | None      # derive: the source it is cut from
    ood: dict | None
    test_sets: dict

    @property
    def version(self) -> dict:
        """Which definition cuts the task and its version: the paper's task (aicd.published), else
        the recipe of its mode (aicd.splits.RECIPE_VERSIONS)."""
        from ..splits import RECIPE_VERSIONS

        if self.kind in published.TASK_KINDS:
            return {"definition": self.kind, "version": published.paper_task(self.kind).version}
        return {"definition": self.mode, "version": RECIPE_VERSIONS[self.mode]}



# -------------------------------------------------------------------- builders


def mode_of(spec: dict, tasks_from: str) -> str:
    """How a task's tables are made. A task may name both a release and a build recipe;
    `tasks_from` (release by default) picks one: release evaluation or the full build."""
    if "ood" in spec:
        return "ood"
    if "derive" in spec:
        return "derive"
    if "build" in spec and ("release" not in spec or tasks_from == "pool"):
        return "build"
    return "release"


def task_plan(name: str, spec: dict, config: dict) -> TaskPlan:
    return TaskPlan(name=name, title=spec["title"], mode=mode_of(spec, config.get("tasks_from", schema_default("tasks_from"))),
                    labels=tuple(spec.get("labels") or ()), kind=(spec.get("build") or {}).get("kind"),
                    source=(spec.get("derive") or {}).get("source"), ood=spec.get("ood"),
                    test_sets=dict(spec.get("test_sets") or {}))


def feature_plan(name: str, spec: dict, features: dict, featurizers) -> FeaturePlan:
    """A feature set's job, decided once: its kind's threads (fewer where its resources say so),
    environment (a concat's: "neural" where a part needs torch), GPUs, memory and runtime (its
    resources, else the table's `features` row: aicd.plan.resources), and what the analyses read of it."""
    cls = featurizers[spec["kind"]]
    parts = tuple(spec.get("parts") or ()) if spec["kind"] == "concat" else ()
    kinds = [featurizers[features[p]["kind"]] for p in parts if p in features] if parts else [cls]
    asks, defaults = spec.get("resources") or {}, resources.for_rule("features")
    return FeaturePlan(
        name=name, kind=spec["kind"], parts=parts, spec=dict(spec),
        threads=min(cls.max_threads, int(asks.get("threads", cls.max_threads))),
        environment="neural" if any(k.environment == "neural" for k in kinds) else "core",
        gpu=int(asks.get("gpu", 0)), mem_mb=int(asks.get("mem_mb", defaults.mem_mb)),
        mem_mb_per_input_mb=0 if "mem_mb" in asks else defaults.per_input_mb,
        runtime=int(asks.get("runtime", defaults.runtime)), back_projects=bool(cls.back_projects),
        named_columns=any(k.named_columns for k in kinds),
        sampled=frozenset(split for p in (parts or (name,)) for split in
                          (((features.get(p) or {}).get("params") or {}).get("rows") or {})))


def detector_plan(name: str, spec: dict, cls, tasks: dict, features: dict) -> DetectorPlan:
    from ..common.errors import AicdError

    asks, only, params = spec.get("resources") or {}, spec.get("tasks"), spec.get("params") or {}
    traits = cls.traits(params)
    featureset = features.get(spec.get("features")) if spec.get("features") else None
    neural = featureset is not None and featureset.environment == "neural"
    if neural and traits.environment not in ("core", "neural"):
        raise AicdError(f"detector {name}: its kind runs in envs/{traits.environment}.yaml, but its feature set "
                        f"{spec.get('features')} needs torch (envs/neural.yaml); use a kind of the core environment")
    return DetectorPlan(
        name=name, kind=spec["kind"], title=spec["title"], dummy=bool(spec.get("dummy", traits.dummy)),
        features=spec.get("features"), params=params, storage=traits.storage,
        threads=min(traits.max_threads, int(asks.get("threads", traits.max_threads))),
        environment="neural" if neural else traits.environment, gpu=int(asks.get("gpu", traits.gpu)),
        mem_mb=int(asks.get("mem_mb", traits.mem_mb)),
        runtime=int(asks.get("runtime", resources.for_rule("detector").runtime)), zero_shot=traits.zero_shot,
        binarise=traits.binarise, explains=traits.explains, applies_to_new_code=traits.applies_to_new_code,
        prepared=cls.prepared_inputs(name, params), tasks=tuple(t for t in tasks if not only or t in only),
        version=traits.version, paper=dict(spec.get("paper") or {}),
        samples_test=traits.covers_feature_rows and featureset is not None and "test" in featureset.sampled)
