"""The plan: every job family the workflow runs, as a pure function of the validated config,
the model registry and the one recorded resolution of the machine (aicd.resolve). It does no
I/O, so the same inputs give the same plan on every node, and tests check it directly.

Detector kinds and feature kinds declare what the plan needs (aicd.detectors.base.Traits,
aicd.features.base): how a fitted model is stored, its threads, environment, GPUs and memory,
whether it is zero-shot, a dummy baseline or scored on binarised labels, what the analyses read
from it, and files other jobs make for it. Each decision is made once: a detector's job in a
DetectorPlan, a feature set's job in a FeaturePlan, who writes code under which protocols in a
GenerationPlan; the rules (workflow/rules/common.smk) and every list built on the plan (the
GPU jobs, the notes) read them from there. No rule names a kind or a feature set.

Names: a "pair" is one Table 4 cell (task, detector); "judge detectors" are the LLM judges'
prediction names (aicd.published.judge_detector)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from . import published
from .config import stage_on
from .generate.protocols import NEEDS_INSTRUCTION

SPLITS = ("train", "validation", "test")


@dataclass(frozen=True)
class JobDefaults:
    """What a detector's or a feature set's job asks where neither its config entry's `resources:`
    nor its kind says: the one home of these values (the rules and the GPU-job list read them
    through DetectorPlan and FeaturePlan)."""

    runtime: int = 120                    # minutes, a detector's jobs and a feature set's
    feature_mem_mb: int = 2000            # a feature set's job, before its inputs' share
    feature_mem_mb_per_input_mb: int = 8  # MB more per MB of its input tables (not where its resources state mem_mb)


JOB_DEFAULTS = JobDefaults()


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
    mem_mb_per_input_mb: int
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
        from .splits import RECIPE_VERSIONS

        if self.kind in published.TASK_KINDS:
            return {"definition": self.kind, "version": published.paper_task(self.kind).version}
        return {"definition": self.mode, "version": RECIPE_VERSIONS[self.mode]}


@dataclass(frozen=True)
class GenerationPlan:
    """Which models write code and under which protocols, decided once (`generation_plan`)."""

    models: tuple           # every model with generate jobs: the pool's, then those only a test set names
    pool: tuple             # those whose code enters the pool
    protocols: dict         # protocol -> its spec, sources spelled out (none that needs a missing instructor)
    instructor: str | None  # the model that writes the instructions, where it has an endpoint
    planned: bool           # the stage is planned (its report, even where no model has an endpoint)
    off: tuple              # what is left out for want of an endpoint (the LLM stages' note)

    @property
    def named(self) -> tuple:
        """Models generated only for the test sets that name them."""
        return tuple(m for m in self.models if m not in self.pool)

    @property
    def instruction_protocols(self) -> dict:
        return {p: s for p, s in self.protocols.items() if p in NEEDS_INSTRUCTION}


@dataclass(frozen=True)
class Plan:
    tasks: dict
    detectors: dict
    features: dict                 # feature set -> FeaturePlan
    pairs: tuple
    sources: tuple                 # every configured source
    dataset_sources: tuple         # sources entering the pool (absent optional ones left out)
    gen: GenerationPlan
    judges: dict
    judge_tasks: tuple
    modes: tuple
    executions: tuple
    dataset: dict | None
    lms: dict                      # detector -> the causal LM it needs trained (aicd.lm settings + task)
    notes: tuple                   # one line per stage left out, for the submitting machine to print
    config: dict = field(repr=False, compare=False)
    kinds: Any = field(default=None, repr=False, compare=False)        # the detector kinds' registry
    featurizers: Any = field(default=None, repr=False, compare=False)  # the feature kinds' registry

    # ---------------------------------------------------------------- construction

    @classmethod
    def from_config(cls, config: dict, models: dict | None = None, resolved: dict | None = None,
                    kinds: dict | None = None, featurizers: dict | None = None) -> Plan:
        """config: validated, defaults filled (aicd.config); models: the generator registry;
        resolved: what aicd.resolve recorded of the machine (only read where the config says
        `auto` or `optional`); kinds/featurizers: the registries (default: the built-ins and
        every kind an installed package registers)."""
        if kinds is None:
            from .detectors import REGISTRY as kinds
        if featurizers is None:
            from .features.registry import FEATURIZERS as featurizers
        models, resolved = models or {}, resolved or {}
        tasks = {name: _task(name, spec, config) for name, spec in config["tasks"].items()}
        features = {name: feature_plan(name, spec, config.get("features") or {}, featurizers)
                    for name, spec in (config.get("features") or {}).items()}
        detectors = {name: _detector(name, spec, kinds[spec["kind"]], tasks, features)
                     for name, spec in config["detectors"].items()}
        absent = dict(resolved.get("absent_sources") or {})
        dataset = config.get("dataset")
        dataset_sources = tuple(s for s in (dataset or {}).get("sources", []) if s not in absent)
        built = any(t.mode == "build" for t in tasks.values())
        gen = generation_plan(config, models, resolved, tasks)
        judges, judges_off = _judges(config, models, resolved)
        notes = [f"Optional source {name}: {path} is not there, so it is left out of the dataset; "
                 f"set sources.{name}.files to its path to include it."
                 for name, path in sorted(absent.items()) if name in (dataset or {}).get("sources", [])]
        notes += _llm_notes([*gen.off, *judges_off], resolved, models, list(gen.named), config)
        notes += _dropped_protocol_notes(tasks, gen, dataset, built)
        judging = config.get("judging") or {}
        every_task = judging.get("tasks", "all") == "all"
        return cls(
            tasks=tasks, detectors=detectors, features=features,
            pairs=tuple((t, d) for t in tasks for d, det in detectors.items() if t in det.tasks),
            sources=tuple(config.get("sources") or {}), dataset_sources=dataset_sources, gen=gen,
            judges=judges, judge_tasks=(tuple(tasks) if every_task else tuple(judging["tasks"])) if judges else (),
            modes=tuple(judging.get("modes", ())) if judges else (),
            executions=tuple(_executions(config, list(gen.models), resolved, notes)),  # a test set's model's code runs too
            dataset=dict(dataset, sources=list(dataset_sources)) if dataset and built else None,
            lms={d.name: d.params["train_lm"] for d in detectors.values()
                 if "lm" in d.prepared and isinstance(d.params.get("train_lm"), dict)},
            notes=tuple(notes), config=config, kinds=kinds, featurizers=featurizers)

    # ---------------------------------------------------------------- the generation stage's plan

    @property
    def generators(self) -> tuple:
        """Every model with generate jobs."""
        return self.gen.models

    @property
    def pool_generators(self) -> tuple:
        """Those whose code enters the pool (not one asked for only as a test set)."""
        return self.gen.pool

    @property
    def gen_protocols(self) -> dict:
        return self.gen.protocols

    @property
    def instruction_protocols(self) -> dict:
        return self.gen.instruction_protocols

    @property
    def instructor(self) -> str | None:
        return self.gen.instructor

    @property
    def generation(self) -> bool:
        """The generation stage is planned (its report, if no model has an endpoint)."""
        return self.gen.planned

    # ---------------------------------------------------------------- queries

    @property
    def judge_detectors(self) -> tuple:
        return tuple(published.judge_detector(j, m) for j in self.judges for m in self.modes)

    def stored(self, storage: str) -> list[str]:
        """Detectors whose fitted model is stored this way (file | folder)."""
        return [d for d, det in self.detectors.items() if det.storage == storage]

    def built_tasks(self) -> list[str]:
        return [t for t, task in self.tasks.items() if task.mode == "build"]

    def ood_tasks(self) -> list[str]:
        return [t for t, task in self.tasks.items() if task.mode == "ood"]

    def loco_tasks(self) -> list[str]:
        """The folds of the leave-one-collection-out protocol (their own table: results/tables/loco.*)."""
        return [t for t in self.ood_tasks() if self.tasks[t].ood.get("protocol") == "leave_one_collection_out"]

    def loco_sources(self, task: str) -> list[str]:
        """The sources a leave-one-collection-out fold reads (every collection's), else none."""
        spec = self.tasks[task].ood or {}
        if spec.get("protocol") != "leave_one_collection_out":
            return []
        return list(dict.fromkeys(s for names in spec["collections"].values() for s in names))

    def feature_jobs(self) -> set[tuple[str, str]]:
        """(task, feature set) of every features job the plan makes, concat parts included."""
        return {(t, fs) for t, d in self.pairs if self.detectors[d].features
                for fs in {self.detectors[d].features, *self.features[self.detectors[d].features].made_of}}

    def gpu_jobs(self) -> list[dict]:
        """The jobs that ask GPUs, per (rule, detector or feature set): how many there are and
        what each asks at attempt 1, as its rule asks it (a feature set's job asks `mem_mb` plus
        `mem_mb_per_input_mb` per MB of its inputs)."""
        jobs = []
        for d, det in self.detectors.items():
            if det.gpu <= 0:
                continue
            asks = {"gpu": det.gpu, "mem_mb": det.mem_mb, "runtime": det.runtime, "threads": det.threads}
            fits = sum(1 for _, p in self.pairs if p == d)
            sets = sum(1 for _, _, p in self.test_set_plan() if p == d)
            calibrated = sum(1 for _, p in self.calibration_pairs() if p == d)  # calibrate applies the model
            for rule, count in (("detect_folder" if det.storage == "folder" else "detect", fits),
                                ("predict_test_set", sets), ("calibrate", calibrated),
                                ("train_causal_lm", int(d in self.lms))):
                if count:
                    jobs.append({"rule": rule, "detector": d, "count": count, **asks})
        planned = self.feature_jobs()
        for name, fp in self.features.items():
            count = sum(1 for _, fs in planned if fs == name)
            if fp.gpu > 0 and count:
                jobs.append({"rule": "features", "detector": name, "count": count, "gpu": fp.gpu, "mem_mb": fp.mem_mb,
                             "mem_mb_per_input_mb": fp.mem_mb_per_input_mb, "runtime": fp.runtime,
                             "threads": fp.threads})
        return jobs

    def trained(self, task: str) -> list[str]:
        """Detectors of `task` that learn from its train split (no dummies, no zero-shot)."""
        return [d for t, d in self.pairs if t == task and not self.detectors[d].dummy and not self.detectors[d].zero_shot]

    def paper_rows(self) -> dict[str, str]:
        """configured detector -> the paper's Table 4 row it is (aicd.published); the others are ours."""
        return published.match_detectors({d: {"kind": det.kind, "features": det.features, "params": det.params,
                                              "paper": det.paper} for d, det in self.detectors.items()})

    def averaged(self, task: str) -> tuple[list[str], str]:
        """"The detectors averaged" of Tables 5-7 and the all-fail analysis, one definition:
        the paper's trained rows run on `task` (its Table 4 rows less the dummy baselines, the
        zero-shot Fast-DetectGPT and a row whose config says it is not comparable with the
        paper's, `paper: {comparable: false}`; our own detectors and the LLM judges are kept out).
        Where none of the paper's rows ran, every trained detector, said as ("ours")."""
        trained = self.trained(task)
        paper = [d for d in trained if d in self.paper_rows()
                 and published.comparability({"paper": self.detectors[d].paper})["comparable"]]
        return (paper, "paper") if paper else (trained, "ours")

    def score_labels(self, task: str, detector: str) -> tuple:
        """The classes a detector is scored on: the task's, or human vs machine where it binarises."""
        det = self.detectors.get(detector)
        return ("human", "machine") if det is not None and det.binarise else self.tasks[task].labels

    def test_set_plan(self) -> list[tuple[str, str, str]]:
        """(task, test set, detector) for every extra test set and detector whose model applies
        to new rows."""
        pairs = set(self.pairs)
        return [(t, s, d) for t, task in self.tasks.items() for s in task.test_sets
                for d in self.detectors if (t, d) in pairs and self.detectors[d].applies_to_new_code]

    def calibration_pairs(self) -> list[tuple[str, str]]:
        """(task, detector) calibrated on the task's human reference code (aicd.splits.reference,
        aicd.scoring.calibrate_model): the config's calibration.tasks that have a human class, and
        their detectors whose model applies to new code (the dummies left out: a guess calibrated
        is still a guess), or those calibration.detectors names, less calibration.exclude."""
        spec = self.config.get("calibration") or {}
        if not spec.get("enabled", True):
            return []
        tasks, detectors = spec.get("tasks", "all"), spec.get("detectors", "all")
        return [(t, d) for t, d in self.pairs if "human" in self.tasks[t].labels and d not in spec.get("exclude", ())
                and (tasks == "all" or t in tasks) and (detectors == "all" or d in detectors)
                and self.detectors[d].applies_to_new_code and not self.detectors[d].dummy]

    def calibrated_tasks(self) -> list[str]:
        """Tasks with a reference table: those of calibration_pairs, in config order."""
        pairs = {t for t, _ in self.calibration_pairs()}
        return [t for t in self.tasks if t in pairs]

    def perturbed_sets(self) -> list[str]:
        """Names of test sets that are a task's own test rows perturbed (not a source)."""
        return sorted({s for task in self.tasks.values() for s, spec in task.test_sets.items() if "perturbation" in spec})

    def split_spec(self, task: str) -> dict:
        """What `python -m aicd.splits {mode}` reads of a task's config entry."""
        spec, mode = self.config["tasks"][task], self.tasks[task].mode
        if mode == "build":
            dataset, keys = self.config["dataset"], ("threshold", "num_perm", "false_negative_weight")
            dedup = {k: v for k, v in {**dataset["minhash"], **dataset["dedup"]}.items() if k in keys}
            return {**spec["build"], "dedup": dedup}
        if mode == "derive":
            return spec["derive"]
        keys = ("release", "columns", "label_map", "target", "label_audit", "defaults", "unmapped")
        release = {k: spec[k] for k in keys if k in spec}
        if "build" in spec:  # the paper's task: which test subsets the release can be given
            release["paper"] = {k: spec["build"][k] for k in ("kind", "seen_languages", "seen_domains")
                                if k in spec["build"]}
        return release

    def report_sources(self) -> list[str]:
        names = {task.source for task in self.tasks.values() if task.mode == "derive"}
        if self.dataset:
            names |= set(self.dataset_sources)
        return sorted(names)

    def analyses(self, task: str) -> dict:
        """What the paper's analyses read on `task`: the n-gram back-projection of the first
        trained detector that explains by coefficients on a back-projecting feature set, and
        SHAP for each that explains by SHAP on a feature set with named columns."""
        trained = self.trained(task)
        averaged, _ = self.averaged(task)
        sets = {d: self.features.get(self.detectors[d].features) for d in trained}
        coefficients = [d for d in trained if self.detectors[d].explains == "coefficients"
                        and sets[d] is not None and sets[d].back_projects]
        shap = [d for d in trained if self.detectors[d].explains == "shap" and sets[d] is not None
                and sets[d].named_columns]
        return {"coefficients": coefficients[:1], "shap": shap, "trained": averaged}

    def versions(self, task: str, detector: str) -> dict:
        """What a score file of (task, detector) says made it: the task's definition and the
        detector kind (or the LLM judge), each with its version."""
        judge = published.parse_judge_detector(detector) if detector in self.judge_detectors else None
        if judge is not None:
            from .judge import VERSION as JUDGE_VERSION

            made = {"kind": "llm_judge", "mode": judge[1], "version": JUDGE_VERSION}
        else:
            made = {"kind": self.detectors[detector].kind, "version": self.detectors[detector].version}
        return {"task": self.tasks[task].version, "detector": made}

    def paper_kind_tasks(self) -> list[str]:
        """Tasks of one of the paper's three kinds (a column of its Table 4), each kind's first."""
        seen, out = set(), []
        for t, task in self.tasks.items():
            if task.kind in published.TASK_KINDS and task.kind not in seen:
                seen.add(task.kind)
                out.append(t)
        return out

    def ood_perturbed_scores(self) -> list[tuple[str, str, str]]:
        """(task, perturbed test set, detector) of the OOD splits: the OOD table's flip rates."""
        return [(t, s, d) for t, s, d in self.test_set_plan()
                if t in self.ood_tasks() and "perturbation" in self.tasks[t].test_sets[s]]

    def summary(self) -> dict[str, Any]:
        """Counts of each job family (what `snakemake -n` would plan), for tests and logs."""
        return {"pairs": len(self.pairs), "generators": len(self.generators), "judges": len(self.judges),
                "executions": len(self.executions), "test_sets": len(self.test_set_plan()), "lms": len(self.lms)}


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


def _task(name: str, spec: dict, config: dict) -> TaskPlan:
    return TaskPlan(name=name, title=spec["title"], mode=mode_of(spec, config.get("tasks_from", "release")),
                    labels=tuple(spec.get("labels") or ()), kind=(spec.get("build") or {}).get("kind"),
                    source=(spec.get("derive") or {}).get("source"), ood=spec.get("ood"),
                    test_sets=dict(spec.get("test_sets") or {}))


def feature_plan(name: str, spec: dict, features: dict, featurizers) -> FeaturePlan:
    """A feature set's job, decided once: its kind's threads (fewer where its resources say so),
    environment (a concat's: "neural" where a part needs torch), GPUs, memory and runtime (its
    resources, else JOB_DEFAULTS), and what the analyses read of it."""
    cls = featurizers[spec["kind"]]
    parts = tuple(spec.get("parts") or ()) if spec["kind"] == "concat" else ()
    kinds = [featurizers[features[p]["kind"]] for p in parts if p in features] if parts else [cls]
    asks, defaults = spec.get("resources") or {}, JOB_DEFAULTS
    return FeaturePlan(
        name=name, kind=spec["kind"], parts=parts, spec=dict(spec),
        threads=min(cls.max_threads, int(asks.get("threads", cls.max_threads))),
        environment="neural" if any(k.environment == "neural" for k in kinds) else "core",
        gpu=int(asks.get("gpu", 0)), mem_mb=int(asks.get("mem_mb", defaults.feature_mem_mb)),
        mem_mb_per_input_mb=0 if "mem_mb" in asks else defaults.feature_mem_mb_per_input_mb,
        runtime=int(asks.get("runtime", defaults.runtime)), back_projects=bool(cls.back_projects),
        named_columns=any(k.named_columns for k in kinds),
        sampled=frozenset(split for p in (parts or (name,)) for split in
                          (((features.get(p) or {}).get("params") or {}).get("rows") or {})))


def _detector(name: str, spec: dict, cls, tasks: dict, features: dict) -> DetectorPlan:
    from .common.errors import AicdError

    resources, only, params = spec.get("resources") or {}, spec.get("tasks"), spec.get("params") or {}
    traits = cls.traits(params)
    featureset = features.get(spec.get("features")) if spec.get("features") else None
    neural = featureset is not None and featureset.environment == "neural"
    if neural and traits.environment not in ("core", "neural"):
        raise AicdError(f"detector {name}: its kind runs in envs/{traits.environment}.yaml, but its feature set "
                        f"{spec.get('features')} needs torch (envs/neural.yaml); use a kind of the core environment")
    return DetectorPlan(
        name=name, kind=spec["kind"], title=spec["title"], dummy=bool(spec.get("dummy", traits.dummy)),
        features=spec.get("features"), params=params, storage=traits.storage,
        threads=min(traits.max_threads, int(resources.get("threads", traits.max_threads))),
        environment="neural" if neural else traits.environment, gpu=int(resources.get("gpu", traits.gpu)),
        mem_mb=int(resources.get("mem_mb", traits.mem_mb)),
        runtime=int(resources.get("runtime", JOB_DEFAULTS.runtime)), zero_shot=traits.zero_shot,
        binarise=traits.binarise, explains=traits.explains, applies_to_new_code=traits.applies_to_new_code,
        prepared=cls.prepared_inputs(name, params), tasks=tuple(t for t in tasks if not only or t in only),
        version=traits.version, paper=dict(spec.get("paper") or {}),
        samples_test=traits.covers_feature_rows and featureset is not None and "test" in featureset.sampled)


def generation_plan(config: dict, models: dict, resolved: dict, tasks: dict) -> GenerationPlan:
    """Who writes code: the generators with an endpoint, where a task is built from the pool
    or no task is read from a release; and, whatever `enabled` says, every model a test set
    names. The protocols they write under, less those that need an instructor without one."""
    off: list[str] = []
    found, instructor_ok = _generators(config, models, resolved, off)
    wanted = any(t.mode == "build" for t in tasks.values()) or not any(t.mode == "release" for t in tasks.values())
    pool = tuple(found) if wanted else ()
    every = pool + tuple(m for m in _test_set_generators(tasks, models, config) if m not in pool)
    protocols = _protocols(config) if every else {}
    if every and not instructor_ok and any(p in NEEDS_INSTRUCTION for p in protocols):
        off.append("the instruction-based protocols (the instructor has no endpoint)")
    return GenerationPlan(
        models=every, pool=pool, off=tuple(off),
        protocols={p: s for p, s in protocols.items() if p not in NEEDS_INSTRUCTION or instructor_ok},
        instructor=(config.get("generation") or {}).get("instructor") if instructor_ok else None,
        planned=stage_on(config, "generation") and (wanted or bool(every)))


def _test_set_generators(tasks: dict, models: dict, config: dict) -> list[str]:
    """Registry models whose generations a task's test set scores (test_sets.X.generation)."""
    from .common.errors import AicdError

    out = []
    for t, task in tasks.items():
        for name, spec in task.test_sets.items():
            model = spec.get("generation")
            if model is None:
                continue
            if model not in models:
                raise AicdError(f"config.tasks.{t}.test_sets.{name}.generation: {model!r} is not in the model "
                                "registry; add it in a models file layered on config/models.yaml (registry: "
                                "[config/models.yaml, my_models.yaml], docs/adding_a_generator.md)")
            if not (config.get("generation") or {}).get("protocols"):
                raise AicdError(f"config.tasks.{t}.test_sets.{name}.generation: the config has no generation "
                                "section with protocols to prompt by: layer the test set on config/demo.yaml, or "
                                "copy its generation section")
            if model not in out:
                out.append(model)
    return out


def _generators(config: dict, models: dict, resolved: dict, off: list) -> tuple[list[str], bool]:
    if not stage_on(config, "generation"):
        return [], False
    gen = config["generation"]
    if gen["enabled"] == "auto":
        names = [n for n in resolved.get("generators") or [] if n in models]  # a model since removed: gone
        if not names:
            off.append("generation")
        return names, bool(resolved.get("instructor"))
    names = list(models) if gen.get("models", "all") == "all" else list(gen["models"])
    return names, bool(gen.get("instructor"))


def _protocols(config: dict) -> dict:
    """Every protocol with its sources spelled out, so a job's params say exactly what it reads;
    a protocol with `n: 0` is left out (a layer turns off a protocol of the config below it)."""
    gen = config["generation"]
    return {p: {**spec, "sources": list(spec.get("sources") or [gen["source"]])}
            for p, spec in gen.get("protocols", {}).items() if int(spec["n"]) > 0}


def _dropped_protocol_notes(tasks: dict, gen: GenerationPlan, dataset: dict | None, built: bool) -> list[str]:
    """One line per protocol whose rows are generated and then dropped by every task that
    would score them: a test set of a model's generations whose task has no class for them
    (`outside_labels: drop`), or pool code of a class no built task has. Turning the protocol
    off in the layer (`n: 0`) saves its requests."""
    from .generate.protocols import PROTOCOL_LABELS

    protocols, notes = gen.protocols, []
    for t, task in tasks.items():
        for name, spec in task.test_sets.items():
            model = spec.get("generation")
            if model not in gen.models or not task.labels:
                continue
            lost = {p: PROTOCOL_LABELS[p] for p in protocols if PROTOCOL_LABELS[p] not in task.labels}
            if lost:
                rows = sum(int(protocols[p]["n"]) for p in lost)
                notes.append(f"Generation: test set {name} of task {t} drops the {'/'.join(sorted(set(lost.values())))} "
                             f"rows of {model}'s {', '.join(sorted(lost))} prompts (up to {rows} rows: not among the "
                             f"task's labels {list(task.labels)}, outside_labels: drop); set their n: 0 in your layer "
                             "to skip those requests.")
    if built and gen.pool and dataset and dataset.get("generations"):
        labels = {label for task in tasks.values() if task.mode == "build" for label in task.labels}
        lost = sorted(p for p in protocols if labels and PROTOCOL_LABELS[p] not in labels)
        if lost:
            notes.append(f"Generation: no built task has a class for the rows of the {', '.join(lost)} prompts "
                         f"({', '.join(sorted({PROTOCOL_LABELS[p] for p in lost}))}): they enter the pool and no task "
                         "scores them (add the fine-grained task, or set their n: 0).")
    return notes


def _judges(config: dict, models: dict, resolved: dict) -> tuple[dict, list[str]]:
    """The judges planned, and what is left out for want of an endpoint."""
    if not stage_on(config, "judging"):
        return {}, []
    judging = config["judging"]
    judges = dict(judging.get("judges") or {})
    if judging["enabled"] == "auto":
        judges = {j: s for j, s in judges.items() if j in (resolved.get("judges") or [])}
        if judging.get("judges") and not judges:
            return judges, ["judging (Table 8 will say 'not run')"]
    return judges, []


def _record(config: dict) -> str:
    return f"{str(config.get('results', 'results')).rstrip('/')}/resolved.json"


def _llm_notes(off: list, resolved: dict, models: dict, named: list, config: dict) -> list[str]:
    """The one LLM stages line, from the plan's own decision: what is left out and why (no
    endpoint here, or the recorded answer that this machine now contradicts), and what is
    planned all the same (a model a test set names)."""
    from .generate.registry import endpoint_hint
    from .resolve import short_answer as _short

    now = resolved.get("now") or {}
    what = {"generators": "generators with an endpoint", "instructor": "the instructor's endpoint",
            "judges": "judges with an endpoint"}
    changed = [f"{what[k]}: recorded {_short(resolved.get(k))}, this machine now says {_short(now[k])}"
               for k in what if k in now]
    if not off and not changed:
        return []
    named_too = (f"; {', '.join(named)} {'is' if len(named) == 1 else 'are'} generated all the same, for the test "
                 f"set{'s' if len(named) > 1 else ''} that name{'s' if len(named) == 1 else ''} "
                 f"{'it' if len(named) == 1 else 'them'}") if named else ""
    if off:
        left = " and ".join("generation for the pool" if o == "generation" and named else o for o in off)
        if changed:  # left out by the record, which this machine now contradicts
            return [f"LLM stages: {left} left out, as recorded in {_record(config)} ({'; '.join(changed)}): to take "
                    f"the change in, run with --config reprobe=true{named_too}."]
        return [f"LLM stages: no endpoint, so {left} left out; to enable, {endpoint_hint(models)}{named_too}."]
    return [f"LLM stages: planned as recorded in {_record(config)} ({'; '.join(changed)}), so jobs without an "
            "endpoint here will fail: give them one, or run with --config reprobe=true to plan from what this "
            f"machine says{named_too}."]


def _executions(config: dict, generators: list, resolved: dict, notes: list) -> list[str]:
    if not stage_on(config, "execution"):
        return []
    ex = config["execution"]
    names = list(ex.get("sources", [])) + (list(generators) if ex.get("generations") else [])
    if not names or ex["enabled"] != "auto":
        return names
    now = (resolved.get("now") or {}).get("execution")
    if not resolved.get("execution"):
        notes.append(f"Sandbox: execution left out, as recorded in {_record(config)} when no container engine "
                     "answered; one answers now: to take it in, run with --config reprobe=true." if now else
                     "Sandbox: no Docker daemon answers (nor Podman), so execution is left out (execution.enabled: "
                     "auto); to enable, install docker.io and start dockerd (see docs/sandbox.md).")
        return []
    if now is False:
        notes.append(f"Sandbox: {len(names)} execution jobs planned, as recorded in {_record(config)} when a container "
                     "engine answered; none answers now, so they will fail here: start it, or run with "
                     "--config reprobe=true to leave them out.")
    return names
