"""The files a run's jobs read, as the plan has them: the input builders of the rules
(workflow/rules/inputs.smk calls them with a job's wildcards), pure functions of the plan, the
config and the run's roots, so they are tested without snakemake (tests/unit/plan/test_run_files.py).

Every file is named by aicd.outputs.Outputs under a root: `out`, the run's own; `data`, the
data it reads (a run built on another, `base:`: the base's sources, dataset, splits, test sets
and LLM and sandbox stages); and, where a run on a base reuses what the base made, the base's
root for a pair's fit and scores, a feature set's matrices, a task's analyses and calibrations
(aicd.records.baserun.Reuse)."""

from __future__ import annotations

from ..outputs import Outputs
from .jobs import SPLITS


class RunFiles:
    def __init__(self, plan, config: dict, results: str, data: str | None = None, reuse=None,
                 base_calibrated=frozenset()):
        self.plan, self.config, self.results = plan, config, results
        self.out, self.data = Outputs(results), Outputs(data or results)
        self.reuse, self.base_calibrated = reuse, set(base_calibrated)

    # ------------------------------------------------------------ whose root holds what

    def made_by(self, task: str, detector: str) -> str:
        """The root holding a (task, detector)'s fit, predictions and scores: the base's where it made them."""
        return self.reuse.of_pair(task, detector, self.results) if self.reuse else self.results

    def made(self, task: str, detector: str) -> Outputs:
        return Outputs(self.made_by(task, detector))

    def features_made(self, task: str, featureset: str) -> Outputs:
        return Outputs(self.reuse.of_features(task, featureset, self.results) if self.reuse else self.results)

    def analysed(self, task: str) -> Outputs:
        return Outputs(self.reuse.of_analyses(task, self.results) if self.reuse else self.results)

    def calibrated_by(self, task: str, detector: str | None = None) -> str:
        """The root holding a task's reference table (detector None) or a pair's calibration."""
        if detector is None:
            return self.data.root if any(t == task for t, _ in self.base_calibrated) else self.results
        return self.made_by(task, detector) if (task, detector) in self.base_calibrated else self.results

    def calibrated(self, task: str, detector: str | None = None) -> Outputs:
        return Outputs(self.calibrated_by(task, detector))

    # ------------------------------------------------------------ tasks, features, detectors

    def split_tables(self, task: str) -> dict:
        """The task's split tables by split name (train, validation, test), in one folder."""
        return {split: self.data.split(task, split) for split in SPLITS}

    def feature_inputs(self, task: str, featureset: str) -> dict:
        """A concat set reads its parts' matrices and fitted featurizers (each list in the order of
        its `parts`); any other set reads the task's split tables."""
        parts = self.plan.features[featureset].parts
        if parts:
            return {"parts": [self.features_made(task, p).features(task, p) for p in parts],
                    "part_models": [self.features_made(task, p).featurizer(task, p) for p in parts]}
        return self.split_tables(task)

    def detect_inputs(self, task: str, detector: str) -> dict:
        inputs = self.split_tables(task)
        featureset = self.plan.detectors[detector].features
        if featureset:
            made = self.features_made(task, featureset)
            inputs["features"] = made.features(task, featureset)
            # stored in the fitted model, so it applies to raw code (aicd detect, extra test sets)
            inputs["featurizer"] = made.featurizer(task, featureset)
        for name, path in self.plan.detectors[detector].prepared.items():
            inputs[f"prepared_{name}"] = self.out.under(path)
        return inputs

    def fitted_model(self, task: str, detector: str) -> str:
        """A (task, detector)'s fitted model: a skops file or a folder, as its kind stores it."""
        files = self.made(task, detector)
        folder = self.plan.detectors[detector].storage == "folder"
        return files.model_folder(task, detector) if folder else files.model(task, detector)

    # ------------------------------------------------------------ the LLM and sandbox stages

    def generation_sources(self, protocols: dict) -> dict:
        """The source tables the protocols prompt from, by name."""
        return {name: self.out.source(name) for name in sorted({s for p in protocols.values() for s in p["sources"]})}

    def judge_tests(self) -> dict:
        """The test split of every task the judges label, by task."""
        return {task: self.data.split(task=task, split="test") for task in self.plan.judge_tasks}

    def judge_runs(self, judge: str, tests: dict, predictions: list, reports: list) -> list[dict]:
        """The judge job's (task, mode) runs, in the order of its outputs (aicd.judge.run.JudgeRun)."""
        params = self.plan.judges[judge].get("params") or {}
        runs = []
        for t in self.plan.judge_tasks:
            target = self.judge_target(t)
            for m in self.plan.modes:
                i = len(runs)
                runs.append({"task": t, "mode": m, "test": tests[t], "labels": list(self.plan.tasks[t].labels),
                             "target": target, "params": params.get(m, {}), "out": predictions[i],
                             "report": reports[i]})
        return runs

    def judge_target(self, task: str) -> str:
        """What a task's classes name, for the judge's prompt (its description of the classes):
        the family of the model that wrote the code where the task is a family task (built as the
        paper's T2, or cut from a source on its `family`), else the label."""
        spec = self.config["tasks"][task]
        if (spec.get("build") or {}).get("kind") == "family":
            return "family"
        return (spec.get("derive") or spec).get("target", "label")

    def generator_card_scored(self, model: str) -> dict:
        """{where: {detector: {predictions, test[, human_predictions, human_test]}}}: each fitted
        detector on the model's rows of a pool task's test split (its code entered the pool), and on
        each test set of its generations, whose AUROC and TPR read the human rows of the task's own
        test split (a test set of generations holds none)."""
        plan, out = self.plan, {}
        if model in plan.pool_generators and plan.dataset and plan.dataset.get("generations"):
            for t, d in plan.pairs:
                if plan.tasks[t].mode == "build":
                    where = f"{plan.tasks[t].title}: its rows of the test split"
                    out.setdefault(where, {})[d] = {"predictions": self.out.predictions(t, d),
                                                    "test": self.out.split(t, "test")}
        for t, s, d in plan.test_set_plan():
            if plan.tasks[t].test_sets[s].get("generation") == model:
                out.setdefault(f"{plan.tasks[t].title}: test set {s}", {})[d] = {
                    "predictions": self.out.test_set_predictions(t, s, d), "test": self.out.test_set(t, s),
                    "human_predictions": self.made(t, d).predictions(t, d), "human_test": self.data.split(t, "test")}
        return out

    def generator_card_inputs(self, model: str) -> dict:
        plan = self.plan
        scored = self.generator_card_scored(model)
        inputs = {"generations": self.out.generations(model), "report": self.out.generations_report(model),
                  "scored": sorted({p for per in scored.values() for c in per.values() for p in c.values()})}
        if model in plan.executions:
            inputs["execution"] = self.out.execution_report(model)
        test_sets = sorted({self.out.test_set_report(t, s) for t, s, _ in plan.test_set_plan()
                            if plan.tasks[t].test_sets[s].get("generation") == model})
        in_pool = model in plan.pool_generators and bool(plan.dataset and plan.dataset.get("generations"))
        if in_pool or test_sets:
            inputs["normalized"] = self.out.normalized_report("generations", model)
        if test_sets:  # what each test set of its generations removed (e.g. classes outside the task's labels)
            inputs["test_sets"] = test_sets
        return inputs

    def execution_input(self, name: str) -> str:
        return self.out.table("generations" if name in self.plan.generators else "sources", name)

    # ------------------------------------------------------------ the dataset stage

    def dataset_spec(self) -> dict:
        """The dataset stage's settings: the plan's where it builds a pool, else the config's (a
        test set of a model's generations goes through the same filters in a release evaluation)."""
        return self.plan.dataset or self.config.get("dataset") or {}

    def generation_tables(self) -> list:
        """Generator tables the pool reads: inputs of the build, fingerprinted like the sources."""
        if self.plan.dataset and self.plan.dataset.get("generations"):
            return [self.out.generations(m) for m in self.plan.pool_generators]
        return []

    def dataset_inputs(self) -> list:
        """results/dataset/normalized/{kind}/{name}.parquet for every table in the pool."""
        plan = self.plan
        if not plan.dataset:
            return []
        names = [("sources", s) for s in plan.dataset_sources]
        names += [("generations", m) for m in (plan.pool_generators if plan.dataset.get("generations") else [])]
        return [self.data.normalized(kind, name) for kind, name in names]

    def test_set_source(self, task: str, test_set: str) -> str:
        """A test set's rows: a source's table, or a registry model's generations through the
        dataset stage's code checks and Table 3 filters (rows they reject are left out, counted)."""
        spec = self.plan.tasks[task].test_sets[test_set]
        if "generation" in spec:
            return self.out.normalized("generations", spec["generation"])
        return self.out.source(spec["source"])

    # ------------------------------------------------------------ scores, analyses, calibration

    def all_scores(self) -> list:
        return [self.made(t, d).scores(t, d) for t, d in self.plan.pairs]

    def judge_scores(self) -> list:
        """Every judge's score file on every task it judges, in each mode (Table 8)."""
        return [self.data.scores(t, d) for t in self.plan.judge_tasks for d in self.plan.judge_detectors]

    def zero_shot_reports(self) -> list:
        return [self.made(t, d).model_report(t, d) for t, d in self.plan.pairs if self.plan.detectors[d].zero_shot]

    def analyses_inputs(self, task: str) -> dict:
        """The test split, the averaged detectors' predictions, and by name the fitted files the
        analyses explain: svm_model and svm_featurizer (the n-gram back-projection), and for each
        SHAP detector D shap_model_D and shap_features_D."""
        plan, chosen = self.plan, self.plan.analyses(task)

        def feats(d):
            return self.features_made(task, plan.detectors[d].features)

        inputs = {"test": self.data.split(task, "test"),
                  "predictions": [self.made(task, d).predictions(task, d) for d in chosen["trained"]]}
        for d in chosen["coefficients"]:  # one at most
            inputs.update(svm_model=self.made(task, d).model(task, d),
                          svm_featurizer=feats(d).featurizer(task, plan.detectors[d].features))
        for d in chosen["shap"]:
            inputs.update({f"shap_model_{d}": self.made(task, d).model(task, d),
                           f"shap_features_{d}": feats(d).features(task, plan.detectors[d].features)})
        return inputs

    def calibration_reference_inputs(self, task: str) -> dict:
        """The task's splits, the pool (a built task: signatures and rows in no split), the library
        source's table (its files the source read are passed over) and other reference sources'
        normalized tables."""
        ref = self.config["calibration"]["reference"]
        out = {s: self.data.split(task, s) for s in SPLITS}
        if self.plan.tasks[task].mode == "build":
            out["pool"] = self.data.pool()
        if ref["library"]:
            out["library"] = self.data.source(ref["library"])
        for name in ref["sources"]:
            out[f"source_{name}"] = self.out.normalized("sources", name)
        return out

    def calibration_views(self) -> list:
        """Each calibrated (task, detector)'s view on its test split, which the report shows."""
        return [self.calibrated(t, d).calibration_view(t, d) for t, d in self.plan.calibration_pairs()]

    def calibration_reports(self) -> list:
        return [self.calibrated(t).reference_report(t) for t in self.plan.calibrated_tasks()]

    def loco_pairs(self) -> list:
        """(fold, detector) of the leave-one-collection-out table: the detectors that give scores."""
        return [(t, d) for t, d in self.plan.pairs
                if t in self.plan.loco_tasks() and d not in self.plan.judge_detectors]

    def targets(self, own_stages: bool) -> list:
        """Everything `snakemake` with no target makes, as the plan has it; `own_stages`: the run
        makes its own LLM, sandbox and dataset stages (a run on a base reads the base's)."""
        plan, out = self.plan, self.out
        files = [out.tab("table4", "tex"), out.report(), out.paper_results()]
        if (self.config.get("judging") or {}).get("judges"):
            files.append(out.tab("table8", "tex"))
        if own_stages:
            files += [out.generation_summary("json")] if plan.generation else []
            files += [out.generator_card("md", m) for m in plan.generators]
            files += [out.execution_summary()] if plan.executions else []
            files += [out.dataset_card()] if plan.dataset else []
        if set(plan.ood_tasks()) - set(plan.loco_tasks()):
            files += [out.tab("ood", "md"), out.tab("ood", "tex")]
        files += [out.tab("loco", x) for x in ("md", "tex", "json")] if plan.loco_tasks() else []
        return files
