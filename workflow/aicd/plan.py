"""The plan: every job family the workflow runs, as a pure function of the validated config,
the model registry and the one recorded resolution of the machine (aicd.resolve). It does no
I/O, so the same inputs give the same plan on every node, and tests check it directly.

Detector kinds and feature kinds declare what the plan needs (aicd.detectors.base,
aicd.features.registry): how a fitted model is stored, its threads, environment, GPUs and
memory, whether it is zero-shot, whether it is scored on binarised labels, what the analyses
read from it, and files other jobs make for it. workflow/rules/common.smk turns the plan into
paths; no rule names a kind or a feature set.

Names: a "pair" is one Table 4 cell (task, detector); "judge detectors" are the LLM judges'
prediction names, judge_{judge}_{mode}."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from . import published
from .config import stage_on
from .generate.protocols import NEEDS_INSTRUCTION

SPLITS = ("train", "validation", "test")
# What a feature set's job asks where its entry's resources do not say (the features rule and
# the plan's list of GPU jobs read the same values): MB before its inputs' share, minutes.
FEATURE_JOB = {"mem_mb": 2000, "runtime": 120}


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
    runtime: int | None     # minutes, from the config entry's resources
    zero_shot: bool
    binarise: bool
    explains: str | None
    applies_to_new_code: bool
    prepared: dict          # input name -> path under results/ (another job makes it)
    tasks: tuple            # the tasks it runs on
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


@dataclass(frozen=True)
class Plan:
    tasks: dict
    detectors: dict
    features: dict
    pairs: tuple
    sources: tuple                 # every configured source
    dataset_sources: tuple         # sources entering the pool (absent optional ones left out)
    generators: tuple              # every model with generate jobs
    pool_generators: tuple         # those whose code enters the pool (not one asked for only as a test set)
    gen_protocols: dict
    instruction_protocols: dict
    instructor: str | None
    judges: dict
    judge_tasks: tuple
    modes: tuple
    executions: tuple
    dataset: dict | None
    lms: dict                      # detector -> the causal LM it needs trained (aicd.lm settings + task)
    generation: bool               # the generation stage is planned (its report, if no model has an endpoint)
    notes: tuple                   # one line per stage left out, for the submitting machine to print
    config: dict = field(repr=False, compare=False)

    # ---------------------------------------------------------------- construction

    @classmethod
    def from_config(cls, config: dict, models: dict | None = None, resolved: dict | None = None,
                    kinds: dict | None = None, featurizers: dict | None = None) -> Plan:
        """config: validated, defaults filled (aicd.config); models: the generator registry;
        resolved: what aicd.resolve recorded of the machine (only read where the config says
        `auto` or `optional`); kinds/featurizers: the registries (default: the built-ins)."""
        if kinds is None:
            from .detectors import REGISTRY as kinds
        if featurizers is None:
            from .features.registry import FEATURIZERS as featurizers
        models, resolved = models or {}, resolved or {}
        notes: list[str] = []
        tasks = {name: _task(name, spec, config) for name, spec in config["tasks"].items()}
        features = dict(config.get("features") or {})
        detectors = {name: _detector(name, spec, kinds[spec["kind"]], tasks,
                                     feature_environment(features, spec.get("features"), featurizers),
                                     sampled_splits(features, spec.get("features")))
                     for name, spec in config["detectors"].items()}
        pairs = tuple((t, d) for t in tasks for d, det in detectors.items() if t in det.tasks)
        absent = dict(resolved.get("absent_sources") or {})
        dataset = config.get("dataset")
        dataset_sources = tuple(s for s in (dataset or {}).get("sources", []) if s not in absent)
        for name, path in sorted(absent.items()):
            if name in (dataset or {}).get("sources", []):
                notes.append(f"Optional source {name}: {path} is not there, so it is left out of the dataset; "
                             f"set sources.{name}.files to its path to include it.")
        built = any(t.mode == "build" for t in tasks.values())
        needs_generation = built or not any(t.mode == "release" for t in tasks.values())
        llm_off: list[str] = []
        generators, instructor_ok = _generators(config, models, resolved, llm_off)
        generators = list(generators) if needs_generation else []
        pool_generators = tuple(generators)
        for model in _test_set_generators(tasks, models, config):  # asked for by name: planned whatever `enabled` says
            if model not in generators:
                generators.append(model)
        named = [m for m in generators if m not in pool_generators]
        needs_generation = needs_generation or bool(generators)
        protocols = _protocols(config) if generators else {}
        if generators and not instructor_ok and any(p in NEEDS_INSTRUCTION for p in protocols):
            llm_off.append("the instruction-based protocols (the instructor has no endpoint)")
        protocols = {p: s for p, s in protocols.items() if p not in NEEDS_INSTRUCTION or instructor_ok}
        judges = _judges(config, models, resolved, llm_off)
        notes += _llm_notes(llm_off, resolved, models, named, config)
        notes += _dropped_protocol_notes(tasks, protocols, generators, pool_generators, dataset, built)
        judging = config.get("judging") or {}
        judge_tasks = tuple(tasks) if judging.get("tasks", "all") == "all" else tuple(judging["tasks"])
        modes = tuple(judging.get("modes", ())) if judges else ()
        executions = _executions(config, generators, resolved, notes)  # a test set's model's code runs too
        lms = {d.name: d.params["train_lm"] for d in detectors.values()
               if "lm" in d.prepared and isinstance(d.params.get("train_lm"), dict)}
        return cls(
            tasks=tasks, detectors=detectors, features=features, pairs=pairs,
            sources=tuple(config.get("sources") or {}), dataset_sources=dataset_sources,
            generators=tuple(generators) if needs_generation else (), pool_generators=pool_generators,
            gen_protocols=protocols if needs_generation else {},
            instruction_protocols={p: s for p, s in protocols.items() if p in NEEDS_INSTRUCTION} if needs_generation
            else {},
            instructor=(config.get("generation") or {}).get("instructor") if instructor_ok else None,
            judges=judges, judge_tasks=judge_tasks if judges else (), modes=modes, executions=tuple(executions),
            dataset=dict(dataset, sources=list(dataset_sources)) if dataset and built else None,
            lms=lms, generation=stage_on(config, "generation") and needs_generation, notes=tuple(notes),
            config=config)

    # ---------------------------------------------------------------- queries

    @property
    def judge_detectors(self) -> tuple:
        return tuple(f"judge_{j}_{m}" for j in self.judges for m in self.modes)

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
                for fs in (self.detectors[d].features, *feature_parts(self.features, self.detectors[d].features))}

    def gpu_feature_jobs(self) -> list[dict]:
        """Feature-set jobs that ask GPUs (`resources: {gpu: N}`, e.g. an lm_stats set on a GPU
        node): per set, how many tasks compute it and what each job asks (as the features rule
        asks it, attempt 1)."""
        jobs, planned = [], self.feature_jobs()
        for name, spec in self.features.items():
            asks = spec.get("resources") or {}
            if int(asks.get("gpu", 0)) <= 0:
                continue
            tasks = {t for t, fs in planned if fs == name}
            if tasks:
                jobs.append({"rule": "features", "detector": name, "count": len(tasks), "gpu": int(asks["gpu"]),
                             "mem_mb": int(asks.get("mem_mb", FEATURE_JOB["mem_mb"])),
                             "runtime": int(asks.get("runtime", FEATURE_JOB["runtime"])),
                             "threads": int(asks.get("threads", 1))})
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
        from .features.registry import FEATURIZERS

        def back_projects(featureset):
            kind = self.features.get(featureset, {}).get("kind")
            return kind in FEATURIZERS and FEATURIZERS[kind].back_projects

        def named(featureset):
            return any(FEATURIZERS[k].named_columns for k in feature_kinds(self.features, featureset) if k in FEATURIZERS)

        trained = self.trained(task)
        averaged, _ = self.averaged(task)
        coefficients = [d for d in trained if self.detectors[d].explains == "coefficients"
                        and back_projects(self.detectors[d].features)]
        shap = [d for d in trained if self.detectors[d].explains == "shap" and named(self.detectors[d].features)]
        return {"coefficients": coefficients[:1], "shap": shap, "trained": averaged}

    def paper_kind_tasks(self) -> list[str]:
        """Tasks of one of the paper's three kinds (a column of its Table 4), each kind's first."""
        seen, out = set(), []
        for t, task in self.tasks.items():
            if task.kind in ("binary", "family", "fine_grained") and task.kind not in seen:
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


def feature_parts(features: dict, featureset: str | None) -> list[str]:
    """The feature sets a feature set is made of: a concat's parts, else itself (none if unknown)."""
    spec = features.get(featureset) if featureset else None
    if not spec:
        return []
    return list(spec.get("parts", [])) if spec["kind"] == "concat" else [featureset]


def feature_kinds(features: dict, featureset: str | None) -> list:
    """The featurizer kinds a feature set is made of: its own, or a concat's parts'."""
    return [features.get(p, {}).get("kind") for p in feature_parts(features, featureset)]


def feature_environment(features: dict, featureset: str | None, featurizers: dict) -> str:
    """The conda environment a feature set's jobs need, and every job that applies its fitted
    featurizer to new code: `neural` where its kind (or a concat part's) needs torch."""
    needs = {featurizers[k].environment for k in feature_kinds(features, featureset) if k in featurizers}
    return "neural" if "neural" in needs else "core"


def sampled_splits(features: dict, featureset: str | None) -> set:
    """The splits of which a feature set (or a concat part) scores only a sample (lm_stats rows)."""
    specs = [features.get(p, {}) for p in feature_parts(features, featureset)]
    return {split for spec in specs for split in ((spec.get("params") or {}).get("rows") or {})}


def _detector(name: str, spec: dict, cls, tasks: dict, features_environment: str = "core",
              sampled: set = frozenset()) -> DetectorPlan:
    resources = spec.get("resources") or {}
    only = spec.get("tasks")
    params = spec.get("params") or {}
    environment = cls.environment_for(params)
    if features_environment == "neural" and environment not in ("core", "neural"):
        from .common.errors import AicdError
        raise AicdError(f"detector {name}: its kind runs in envs/{environment}.yaml, but its feature set "
                        f"{spec.get('features')} needs torch (envs/neural.yaml); use a kind of the core environment")
    return DetectorPlan(
        name=name, kind=spec["kind"], title=spec["title"], dummy=bool(spec.get("dummy", False)),
        features=spec.get("features"), params=params, storage=cls.storage,
        threads=min(cls.max_threads, int(resources.get("threads", cls.max_threads))),
        environment="neural" if features_environment == "neural" else environment, gpu=int(resources.get("gpu", cls.gpu)), mem_mb=int(resources.get("mem_mb", cls.mem_mb)),
        runtime=resources.get("runtime"), zero_shot=cls.is_zero_shot(params), binarise=cls.binarises(params), explains=cls.explains,
        applies_to_new_code=cls.applies_to_new_code, prepared=cls.prepared_inputs(name, params),
        tasks=tuple(t for t in tasks if not only or t in only), paper=dict(spec.get("paper") or {}),
        samples_test=bool(cls.covers_feature_rows) and "test" in sampled)


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


def _dropped_protocol_notes(tasks: dict, protocols: dict, generators: list, pool_generators: tuple,
                            dataset: dict | None, built: bool) -> list[str]:
    """One line per protocol whose rows are generated and then dropped by every task that
    would score them: a test set of a model's generations whose task has no class for them
    (`outside_labels: drop`), or pool code of a class no built task has. Turning the protocol
    off in the layer (`n: 0`) saves its requests."""
    from .generate.protocols import PROTOCOL_LABELS

    notes = []
    for t, task in tasks.items():
        for name, spec in task.test_sets.items():
            model = spec.get("generation")
            if model not in generators or not task.labels:
                continue
            lost = {p: PROTOCOL_LABELS[p] for p in protocols if PROTOCOL_LABELS[p] not in task.labels}
            if lost:
                rows = sum(int(protocols[p]["n"]) for p in lost)
                notes.append(f"Generation: test set {name} of task {t} drops the {'/'.join(sorted(set(lost.values())))} "
                             f"rows of {model}'s {', '.join(sorted(lost))} prompts (up to {rows} rows: not among the "
                             f"task's labels {list(task.labels)}, outside_labels: drop); set their n: 0 in your layer "
                             "to skip those requests.")
    if built and pool_generators and dataset and dataset.get("generations"):
        labels = {label for task in tasks.values() if task.mode == "build" for label in task.labels}
        lost = sorted(p for p in protocols if labels and PROTOCOL_LABELS[p] not in labels)
        if lost:
            notes.append(f"Generation: no built task has a class for the rows of the {', '.join(lost)} prompts "
                         f"({', '.join(sorted({PROTOCOL_LABELS[p] for p in lost}))}): they enter the pool and no task "
                         "scores them (add the fine-grained task, or set their n: 0).")
    return notes


def _judges(config: dict, models: dict, resolved: dict, off: list) -> dict:
    if not stage_on(config, "judging"):
        return {}
    judging = config["judging"]
    judges = dict(judging.get("judges") or {})
    if judging["enabled"] == "auto":
        judges = {j: s for j, s in judges.items() if j in (resolved.get("judges") or [])}
        if judging.get("judges") and not judges:
            off.append("judging (Table 8 will say 'not run')")
    return judges


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
