# One job per (task, detector): fit on train, predict test. One definition: a fitted model is
# stored one of two ways, as its kind declares (aicd.detectors.base.Detector.storage), a skops
# file (aicd.models.fitted_files: reading it runs no code from it) or a save_pretrained folder, and
# snakemake declares a folder output apart from a file one, so the folder variant is this rule
# with its model output (and which detectors it matches) replaced: threads, environment, GPUs,
# memory, runtime and the command are the same for both, from the plan.
#
# A folder-stored kind's checkpoints live in results/checkpoints/{task}/{detector}/, outside the
# rule's outputs, so a killed or pre-empted job (snakemake deletes an incomplete job's outputs)
# resumes from its last checkpoint when it runs again; they are removed after a successful fit.
# Tokenised splits are cached in results/cache/tokens/{task}/, shared by models with the same
# tokenizer; a file-stored kind reads the run's per-text cache, results/cache/features/ (detect_args).


rule detect:
    input:
        unpack(detect_inputs),
    output:
        predictions=OUT.predictions(),
        model=OUT.model(),
        report=OUT.model_report(),
        validation_scores=OUT.validation_scores(),
    log:
        OUT.log("detect", "{task}", "{detector}"),
    benchmark:
        OUT.benchmark("detect", "{task}", "{detector}")
    wildcard_constraints:
        detector=none_of(PLAN.stored("folder") + list(PLAN.judge_detectors)),
    # Longest first: a fit over many classes (T2's twelve) takes several times a binary one, and
    # started among the last jobs it would end the run alone on one core; a neural detector's fit
    # leads to its calibration, the longest job after the judge.
    priority: neural_first
    conda:
        detector_env
    threads: detector_threads
    resources:
        **detector_res(),
    params:
        guard=guard("detect"),
        spec=detector_spec,
        args=detect_args,
        tasks_dir=lambda w, input: parent(input.train),
        seed=SEED,
    shell:
        "{params.guard}python -m aicd.detectors fit --spec {params.spec} --task {wildcards.task}"
        " --tasks-dir {params.tasks_dir} {params.args} --seed {params.seed} --threads {threads}"
        " --out {output.predictions} --model {output.model} --report {output.report}"
        " --validation-scores {output.validation_scores} > {log} 2>&1"


use rule detect as detect_folder with:
    output:
        predictions=OUT.predictions(),
        model=directory(OUT.model_folder()),
        report=OUT.model_report(),
        validation_scores=OUT.validation_scores(),
    wildcard_constraints:
        detector=one_of(PLAN.stored("folder")),
    # the longest jobs of a run (fine-tuned encoders) start first among the ready ones, so that the
    # others fill the cores beside them instead of leaving them as the last job (BENCHMARKS.md)
    priority: 10
