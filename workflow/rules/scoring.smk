# Scores per (task, detector): macro-F1, per-class metrics, confusion matrix, breakdowns.


rule score:
    input:
        predictions=OUT.predictions(),
        test=DATA_OUT.split(split="test"),
        validation_scores=validation_scores,
    output:
        OUT.scores(),
    log:
        OUT.log("score", "{task}", "{detector}"),
    benchmark:
        OUT.benchmark("score", "{task}", "{detector}")
    priority: 3  # a second's job that the figures and tables wait for: right after its fit
    conda:
        env("core")
    threads: rule_threads("score")
    resources:
        **res("score"),
    params:
        guard=guard("score"),
        labels=lambda w: labels_arg(PLAN.score_labels(w.task, w.detector)),
        sample=score_sample_flag,
        fprs=lambda w: " ".join(map(str, config["scoring"]["fprs"])),
        versions=lambda w: as_arg(PLAN.versions(w.task, w.detector)),
    shell:
        "{params.guard}python -m aicd.scoring --task {wildcards.task} --detector {wildcards.detector}"
        " --predictions {input.predictions} --test {input.test} --labels {params.labels} {params.sample}"
        " --validation-scores {input.validation_scores} --fpr {params.fprs} --versions {params.versions}"
        " --out {output} > {log} 2>&1"


# One fitted detector calibrated on its task's human reference code (aicd.scoring.calibrate_model):
# per-language thresholds at each calibration.fprs, which `aicd detect` reads beside the model,
# and what they do on the test split (the calibrated view beside Table 4). It applies the model,
# so it asks what the detector's fit asks (environment, threads, memory, GPUs).
rule calibrate:
    input:
        model=fitted_model,
        reference=lambda w: calibrated(w.task).reference(w.task),
        predictions=lambda w: made(w.task, w.detector).predictions(w.task, w.detector),
        test=DATA_OUT.split(split="test"),
        validation_scores=lambda w: made(w.task, w.detector).validation_scores(w.task, w.detector),
    output:
        calibration=OUT.calibration(),
        view=OUT.calibration_view(),
    log:
        OUT.log("calibrate", "{task}", "{detector}"),
    benchmark:
        OUT.benchmark("calibrate", "{task}", "{detector}")
    priority: neural_first
    conda:
        detector_env
    threads: detector_threads
    resources:
        **detector_res(),
    params:
        guard=guard("calibrate"),
        spec=detector_spec,
        settings=calibration_settings,
        feature_cache=OUT.features_cache(),
    shell:
        "{params.guard}python -m aicd.scoring calibrate --task {wildcards.task} --detector {wildcards.detector}"
        " --model {input.model} --spec {params.spec} --reference {input.reference} --predictions {input.predictions}"
        " --test {input.test} --validation-scores {input.validation_scores} --settings {params.settings}"
        " --threads {threads} --feature-cache {params.feature_cache}"
        " --out {output.calibration} --view {output.view} > {log} 2>&1"
