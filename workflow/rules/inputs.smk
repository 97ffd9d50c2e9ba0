# The input functions and command arguments of the rules (common.smk's setup first): thin
# wrappers that give a job's wildcards to the builders of aicd.plan.files (FILES), which know the
# plan, and the small argument helpers that read a job's `input`.


def made(task, detector):
    """The files of a (task, detector)'s fit, predictions and scores: the base's where it made them."""
    return FILES.made(task, detector)


def features_made(task, featureset):
    return FILES.features_made(task, featureset)


def analysed(task):
    return FILES.analysed(task)


def multiclass_first(w):
    """A job's priority: 1 on a task of more than two classes, whose fits and figures take
    several times a two-class task's, so that they start before the short jobs, not after."""
    return 1 if len(PLAN.tasks[w.task].labels) > 2 else 0


NEURAL_FIRST = 10  # the judge's too: the long jobs after the task splits start before the short ones


def neural_first(w):
    """A detector's fit or calibration: NEURAL_FIRST where it runs a neural model (a causal LM's
    statistics over the reference programs: minutes, not the seconds of the others), so that the
    chain of its fit and its calibration starts as soon as it can, beside the long jobs, not last
    after every short one; else its task's (multiclass_first)."""
    return NEURAL_FIRST if detector(w).environment == "neural" else multiclass_first(w)


def neural_features_first(w):
    """A feature set's job: NEURAL_FIRST for a neural model's (the statistics the chain above is
    fitted on), else 5: every detector on a feature set waits for it."""
    return NEURAL_FIRST if feature(w).environment == "neural" else 5


def detector_env(w):
    return env(detector(w).environment)


def feature(w):
    """The feature set's job as the plan has it (aicd.plan.FeaturePlan: threads, environment,
    GPUs, memory, runtime, parts)."""
    return PLAN.features[w.featureset]


def feature_spec(w):
    return as_arg(config_slice(feature(w).spec, baserun.FEATURE_JOB_KEYS))


def feature_env(w):
    return env(feature(w).environment)


# ---------------------------------------------------------------- sources and tasks


def source_spec(name):
    """The source's config entry, with the pinned entries (version, sha256) of its gathered
    `pinned:NAME` roots, so changing a pin reruns it."""
    return pinned.with_pins(config["sources"][name])


def task(w):
    return PLAN.tasks[w.task]


def task_source(w):
    if task(w).mode == "build":
        return {"source": OUT.pool()}
    return {"source": OUT.source(task(w).source)} if task(w).mode == "derive" else {}


def task_spec(w):
    return as_arg(PLAN.split_spec(w.task))


def task_source_arg(w, input):
    if "source" not in input.keys():
        return ""
    return f"--{'pool' if task(w).mode == 'build' else 'source'} {input.source}"


def split_tables(w):
    return FILES.split_tables(w.task)


# ---------------------------------------------------------------- features and detectors


def feature_inputs(w):
    return FILES.feature_inputs(w.task, w.featureset)


def feature_args(w, input):
    if "parts" in input.keys():
        return f"--parts {' '.join(input.parts)} --part-models {' '.join(input.part_models)}"
    return f"--tasks-dir {parent(input.train)}"


def detect_inputs(w):
    return FILES.detect_inputs(w.task, w.detector)


def detect_args(w, input):
    args = [f"--features {input.features} --featurizer {input.featurizer}"] if "features" in input.keys() else []
    if detector(w).storage == "folder":  # checkpoints kept across a killed job; tokenised splits shared
        args.append(f"--work-dir {OUT.checkpoints(w.task, w.detector)} --cache-dir {OUT.token_cache(w.task)}")
    else:  # per-text feature values the run's jobs share (robust's stylometry; aicd.common.text_cache)
        args.append(f"--cache-dir {OUT.features_cache()}")
    prepared = [f"{k[len('prepared_'):]}={v}" for k, v in input.items() if k.startswith("prepared_")]
    if prepared:
        args.append("--prepared " + " ".join(prepared))
    return " ".join(args)


def fitted_model(w):
    return FILES.fitted_model(w.task, w.detector)


def detector_spec(w):
    return as_arg(baserun.job_spec(config["detectors"][w.detector]))


def lm_spec(w):
    return {k: v for k, v in PLAN.lms[w.detector].items() if k != "task"}


# ---------------------------------------------------------------- LLM stages and the sandbox


def model_arg(name):
    """A model's entry for a job that runs it (without the keys only a report reads)."""
    return as_arg(job_entry(MODELS[name]))


def generation_entry(name):
    """A model's entry as the generation jobs serve it (generation.serve over its `serve:`)."""
    return with_serving(MODELS[name], config["generation"].get("serve"))


def generator_card_scored(model):
    return FILES.generator_card_scored(model)


def generator_card_inputs(w):
    return FILES.generator_card_inputs(w.model)


def generator_card_args(w, input):
    args = [f"--execution {input.execution}"] if "execution" in input.keys() else []
    args += [f"--normalized {input.normalized}"] if "normalized" in input.keys() else []
    args += [f"--test-set-reports {' '.join(input.test_sets)}"] if "test_sets" in input.keys() else []
    return " ".join(args)


def judge_sample_args(judge):
    judging = config["judging"]
    args = [f"--max-rows {judging['max_rows']}"] if judging.get("max_rows") else []
    args += [f"--max-code-chars {judging['max_code_chars']}"] if judging.get("max_code_chars") else []
    args += ["--constrained"] if PLAN.judges[judge].get("constrained") else []
    return " ".join(args)


def judge_tests(w):
    return FILES.judge_tests()


def judge_runs_arg(judge, input, output):
    return as_arg(FILES.judge_runs(judge, dict(input.items()), list(output.predictions), list(output.reports)))


def generation_sources(protocols):
    return FILES.generation_sources(protocols)


def source_args(paths):
    return " ".join(f"--source {shlex.quote(f'{name}={path}')}" for name, path in paths.items())


def execution_input(w):
    return FILES.execution_input(w.name)


def sandbox_base():
    return LOCAL_BASE if config["execution"]["base"] == "debootstrap" else config["execution"]["base_image"]


# ---------------------------------------------------------------- scores, reports and the paper


def all_scores():
    return FILES.all_scores()


def judge_scores():
    return FILES.judge_scores()


def score_sample_flag(w):
    # LLM judges label a stratified sample of the test split, not all of it; so do zero-shot
    # detectors over a feature set that scored a sample (lm_stats rows)
    sampled = w.detector in PLAN.detectors and PLAN.detectors[w.detector].samples_test
    return "--sample" if w.detector in PLAN.judge_detectors or sampled else ""


def reference_predictions(w):
    # a perturbed test set is scored against the unperturbed predictions too: the labels that flip
    perturbed = "perturbation" in task(w).test_sets[w.test_set]
    return [OUT.predictions(w.task, w.detector)] if perturbed else []


def validation_scores(w):
    # what thresholds at a fixed FPR are set on; LLM judges give labels only
    return [] if w.detector in PLAN.judge_detectors else [OUT.validation_scores(w.task, w.detector)]


def zero_shot_reports():
    return FILES.zero_shot_reports()


def analyses_inputs(w):
    return FILES.analyses_inputs(w.task)


def analyses_titles(w):
    # the titles of the detectors the analyses name (SHAP), not every row's: a new row's title
    # leaves the analyses as they are
    return {d: PLAN.detectors[d].title for d in PLAN.analyses(w.task)["shap"]}


def analyses_args(w, input):
    args = [f"--svm {input.svm_model} {input.svm_featurizer}"] if "svm_model" in input.keys() else []
    for d in PLAN.analyses(w.task)["shap"]:
        args.append(f"--shap {d} {input[f'shap_model_{d}']} {input[f'shap_features_{d}']}")
    if input.predictions:
        args.append(f"--predictions {' '.join(input.predictions)}")
    return " ".join(args)


def test_set_source(w):
    return FILES.test_set_source(w.task, w.test_set)


def dataset_spec():
    return FILES.dataset_spec()


def generation_tables(w):
    return FILES.generation_tables()


def dataset_inputs():
    return FILES.dataset_inputs()


# ---------------------------------------------------------------- calibration on human reference code


def calibration_spec():
    return config["calibration"]


def calibrated(task, detector=None):
    return FILES.calibrated(task, detector)


def calibration_reference_inputs(w):
    return FILES.calibration_reference_inputs(w.task)


def calibration_reference_spec(w):
    """What the reference job reads of the config: calibration.reference, the dataset's dedup,
    minhash and filter settings, and the library source's own entry (its pins: a changed pin
    reruns it)."""
    ref = dict(calibration_spec()["reference"])
    data = dataset_spec()
    ref["dedup"] = {**data.get("minhash", {}), **data.get("dedup", {})}
    ref["minhash"] = data.get("minhash", {})
    ref["normalize"] = config_slice(data, ["filters", "minhash", "langid_min_margin"])
    if ref["library"]:
        ref["library_spec"] = source_spec(ref["library"])
    return as_arg(ref)


def calibration_reference_args(w, input):
    keys = input.keys()
    args = [f"--pool {input.pool}"] if "pool" in keys else []
    args += [f"--library {calibration_spec()['reference']['library']} {input.library}"] if "library" in keys else []
    args += [f"--source {k[len('source_'):]} {input[k]}" for k in keys if k.startswith("source_")]
    return " ".join(args)


def calibration_settings(w):
    spec = calibration_spec()
    settings = {**config_slice(spec, ["fprs", "held_out", "floor", "view_fpr", "adapted"]), "seed": SEED}
    if spec.get("fpr_confidence") is not None:  # only where set: a run calibrated on average reruns nothing
        settings["fpr_confidence"] = spec["fpr_confidence"]
    return as_arg(settings)


def calibration_views():
    return FILES.calibration_views()


def calibration_reports():
    return FILES.calibration_reports()


def targets():
    """Everything `snakemake` with no target makes, as the plan has it."""
    return FILES.targets(own_stages=not BASE)


def loco_pairs():
    return FILES.loco_pairs()


# A dry run for SLURM says where each GPU job goes (the plugin picks partitions when it submits)
# and whether the jobs can read the release (and the Hub or local sources) from the nodes.
if DRY_RUN and not workflow.remote_exec:
    from aicd.site_profile import gpu_partition_note, input_access_note, input_locations, slurm_partitions
    from aicd.sources.loader import source_parts

    _on_slurm, _partitions = slurm_partitions(sys.argv, os.environ)
    if _on_slurm and PLAN.gpu_jobs():
        NOTES.append(gpu_partition_note(PLAN.gpu_jobs(), _partitions))
    if _on_slurm and not BASE:
        NOTES.extend(input_access_note(input_locations(config, PLAN, source_parts), os.environ))
