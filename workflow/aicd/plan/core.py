"""The Plan: every job family the workflow runs, and the queries the rules and reports make of
it (see the package's docstring)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .. import published
from ..common.defaults import schema_default
from .generation import GenerationPlan, dropped_protocol_notes, execution_plan, generation_plan, judge_plan, llm_notes
from .jobs import detector_plan, feature_plan, task_plan


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
            from ..detectors import REGISTRY as kinds
        if featurizers is None:
            from ..features.registry import FEATURIZERS as featurizers
        models, resolved = models or {}, resolved or {}
        tasks = {name: task_plan(name, spec, config) for name, spec in config["tasks"].items()}
        features = {name: feature_plan(name, spec, config.get("features") or {}, featurizers)
                    for name, spec in (config.get("features") or {}).items()}
        detectors = {name: detector_plan(name, spec, kinds[spec["kind"]], tasks, features)
                     for name, spec in config["detectors"].items()}
        absent = dict(resolved.get("absent_sources") or {})
        dataset = config.get("dataset")
        dataset_sources = tuple(s for s in (dataset or {}).get("sources", []) if s not in absent)
        built = any(t.mode == "build" for t in tasks.values())
        gen = generation_plan(config, models, resolved, tasks)
        judges, judges_off = judge_plan(config, models, resolved)
        notes = [f"Optional source {name}: {path} is not there, so it is left out of the dataset; "
                 f"set sources.{name}.files to its path to include it."
                 for name, path in sorted(absent.items()) if name in (dataset or {}).get("sources", [])]
        notes += llm_notes([*gen.off, *judges_off], resolved, models, list(gen.named), config)
        notes += dropped_protocol_notes(tasks, gen, dataset, built)
        judging = config.get("judging") or {}
        every_task = judging.get("tasks", schema_default("judging.tasks")) == "all"
        return cls(
            tasks=tasks, detectors=detectors, features=features,
            pairs=tuple((t, d) for t in tasks for d, det in detectors.items() if t in det.tasks),
            sources=tuple(config.get("sources") or {}), dataset_sources=dataset_sources, gen=gen,
            judges=judges, judge_tasks=(tuple(tasks) if every_task else tuple(judging["tasks"])) if judges else (),
            modes=tuple(judging.get("modes", ())) if judges else (),
            executions=tuple(execution_plan(config, list(gen.models), resolved, notes)),  # a test set's model's code runs too
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
        if not spec.get("enabled", schema_default("calibration.enabled")):
            return []
        tasks = spec.get("tasks", schema_default("calibration.tasks"))
        detectors = spec.get("detectors", schema_default("calibration.detectors"))
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
            from ..judge import VERSION as JUDGE_VERSION

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
