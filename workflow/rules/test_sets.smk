# Extra test sets (tasks.<task>.test_sets: {name: {source: ...}}, {name: {generation: MODEL}} or
# {name: {perturbation: ...}}):
# the detectors fitted once on the task's train split predict and score each set; adding a set
# adds only its own prediction and scoring jobs (no features or fits). A perturbed set is the
# task's own test rows rewritten; its score also counts the labels that flip.


rule test_set:
    input:
        source=test_set_source,
        train=f"{RESULTS}/tasks/{{task}}/train.parquet",
    output:
        table=f"{RESULTS}/tasks/{{task}}/test_sets/{{test_set}}.parquet",
        report=f"{RESULTS}/tasks/{{task}}/test_sets/{{test_set}}.report.json",
    log:
        f"{RESULTS}/logs/test_set/{{task}}/{{test_set}}.log",
    benchmark:
        f"{RESULTS}/benchmarks/test_set/{{task}}/{{test_set}}.tsv"
    wildcard_constraints:
        test_set=none_of(PLAN.perturbed_sets()),
    conda:
        env("core")
    threads: 1
    resources:
        mem_mb=mem_mb(2000, 4),
        runtime=30,
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
        test=f"{RESULTS}/tasks/{{task}}/test.parquet",
    output:
        table=f"{RESULTS}/tasks/{{task}}/test_sets/{{test_set}}.parquet",
        report=f"{RESULTS}/tasks/{{task}}/test_sets/{{test_set}}.report.json",
    log:
        f"{RESULTS}/logs/perturbed_test_set/{{task}}/{{test_set}}.log",
    benchmark:
        f"{RESULTS}/benchmarks/perturbed_test_set/{{task}}/{{test_set}}.tsv"
    wildcard_constraints:
        test_set=one_of(PLAN.perturbed_sets()),
    conda:
        env("core")
    threads: 1
    resources:
        mem_mb=mem_mb(2000, 4),
        runtime=30,
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
        test=f"{DATA}/tasks/{{task}}/test_sets/{{test_set}}.parquet",
    output:
        f"{RESULTS}/predictions/{{task}}/test_sets/{{test_set}}/{{detector}}.parquet",
    log:
        f"{RESULTS}/logs/predict_test_set/{{task}}/{{test_set}}/{{detector}}.log",
    benchmark:
        f"{RESULTS}/benchmarks/predict_test_set/{{task}}/{{test_set}}/{{detector}}.tsv"
    conda:
        detector_env
    threads: detector_threads
    resources:
        mem_mb=detector_mem_mb(),
        runtime=detector_runtime(),
        gpu=detector_gpu,
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
        predictions=f"{RESULTS}/predictions/{{task}}/test_sets/{{test_set}}/{{detector}}.parquet",
        test=f"{DATA}/tasks/{{task}}/test_sets/{{test_set}}.parquet",
        validation_scores=validation_scores,
        reference=reference_predictions,
    output:
        f"{RESULTS}/scores/{{task}}/test_sets/{{test_set}}/{{detector}}.json",
    log:
        f"{RESULTS}/logs/score_test_set/{{task}}/{{test_set}}/{{detector}}.log",
    benchmark:
        f"{RESULTS}/benchmarks/score_test_set/{{task}}/{{test_set}}/{{detector}}.tsv"
    conda:
        env("core")
    threads: 1
    resources:
        mem_mb=lambda w, attempt: 2000 * attempt,
        runtime=30,
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
