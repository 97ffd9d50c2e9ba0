# Extra test sets (tasks.<task>.test_sets: {name: {source: ...}}, {name: {generation: MODEL}} or
# {name: {perturbation: ...}}):
# the detectors fitted once on the task's train split predict and score each set; adding a set
# adds only its own prediction and scoring jobs (no features or fits). A perturbed set is the
# task's own test rows rewritten; its score also counts the labels that flip.


rule test_set:
    input:
        source=test_set_source,
        train=OUT.split(split="train"),
    output:
        table=OUT.test_set(),
        report=OUT.test_set_report(),
    log:
        OUT.log("test_set", "{task}", "{test_set}"),
    benchmark:
        OUT.benchmark("test_set", "{task}", "{test_set}")
    wildcard_constraints:
        test_set=none_of(PLAN.perturbed_sets()),
    conda:
        env("core")
    threads: rule_threads("test_set")
    resources:
        **res("test_set"),
    params:
        guard=guard("test_set"),
        spec=lambda w: as_arg(
            {
                "target": config["tasks"][w.task].get("target", "label"),
                "labels": list(task(w).labels),
                "outside_labels": task(w).test_sets[w.test_set].get("outside_labels", "error"),
            }
        ),
    shell:
        "{params.guard}python -m aicd.splits test-set --task {wildcards.task} --name {wildcards.test_set}"
        " --spec {params.spec} --source {input.source} --train {input.train} --out {output.table}"
        " --report {output.report} > {log} 2>&1"


rule perturbed_test_set:
    input:
        test=OUT.split(split="test"),
    output:
        table=OUT.test_set(),
        report=OUT.test_set_report(),
    log:
        OUT.log("perturbed_test_set", "{task}", "{test_set}"),
    benchmark:
        OUT.benchmark("perturbed_test_set", "{task}", "{test_set}")
    wildcard_constraints:
        test_set=one_of(PLAN.perturbed_sets()),
    conda:
        env("core")
    threads: rule_threads("perturbed_test_set")
    resources:
        **res("perturbed_test_set"),
    params:
        guard=guard("perturbed_test_set"),
        kind=lambda w: task(w).test_sets[w.test_set]["perturbation"],
        seed=SEED,
    shell:
        "{params.guard}python -m aicd.splits perturb --task {wildcards.task} --name {wildcards.test_set}"
        " --kind {params.kind} --test {input.test} --seed {params.seed} --out {output.table}"
        " --report {output.report} > {log} 2>&1"


# One rule for every kind: the model input is a skops file or a folder, as the kind stores it
# (fitted_model), and the job asks what the detector's fit asks (threads, memory, runtime, GPUs).
rule predict_test_set:
    input:
        model=fitted_model,
        test=DATA_OUT.test_set(),
    output:
        OUT.test_set_predictions(),
    log:
        OUT.log("predict_test_set", "{task}", "{test_set}", "{detector}"),
    benchmark:
        OUT.benchmark("predict_test_set", "{task}", "{test_set}", "{detector}")
    conda:
        detector_env
    threads: detector_threads
    resources:
        **detector_res(),
    params:
        guard=guard("predict_test_set"),
        # the config entry: the user's own code it names (a kind: python detector's class) is
        # trusted in the model file
        spec=detector_spec,
    shell:
        "{params.guard}python -m aicd.detectors predict --model {input.model} --test {input.test} --threads {threads}"
        " --spec {params.spec} --out {output} > {log} 2>&1"


rule score_test_set:
    input:
        predictions=OUT.test_set_predictions(),
        test=DATA_OUT.test_set(),
        validation_scores=validation_scores,
        reference=reference_predictions,
    output:
        OUT.test_set_scores(),
    log:
        OUT.log("score_test_set", "{task}", "{test_set}", "{detector}"),
    benchmark:
        OUT.benchmark("score_test_set", "{task}", "{test_set}", "{detector}")
    conda:
        env("core")
    threads: rule_threads("score_test_set")
    resources:
        **res("score_test_set"),
    params:
        guard=guard("score_test_set"),
        labels=lambda w: labels_arg(PLAN.score_labels(w.task, w.detector)),
        fprs=lambda w: " ".join(map(str, config["scoring"]["fprs"])),
        versions=lambda w: as_arg(PLAN.versions(w.task, w.detector)),
    shell:
        "{params.guard}python -m aicd.scoring --task {wildcards.task} --detector {wildcards.detector}"
        " --predictions {input.predictions} --test {input.test} --labels {params.labels}"
        " --validation-scores {input.validation_scores} --reference {input.reference} --fpr {params.fprs}"
        " --versions {params.versions} --out {output} > {log} 2>&1"
