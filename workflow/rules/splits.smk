# Task tables: cut from the deduplicated pool (the paper's T1-T3), derived from one source
# with seeded stratified splits, or loaded from a release.


rule task_split:
    input:
        unpack(task_source),
    output:
        train=OUT.split(split="train"),
        validation=OUT.split(split="validation"),
        test=OUT.split(split="test"),
        report=OUT.task_report(),
    log:
        OUT.log("task_split", "{task}"),
    benchmark:
        OUT.benchmark("task_split", "{task}")
    wildcard_constraints:
        task=none_of(PLAN.ood_tasks()),  # those are cut by rule ood_split
    priority: 20  # every detector and feature set of the task waits for it (as normalize)
    conda:
        env("core")
    # language identification of release rows runs in parallel (capped by --cores)
    threads: task_split_threads
    resources:
        **task_split_res(),
    params:
        guard=guard("task_split"),
        mode=lambda w: task(w).mode,
        spec=task_spec,
        seed=lambda w: 0 if task(w).mode == "release" else SEED,
        # id -> language per split, kept outside the outputs so a rerun reuses it
        langid=lambda w: (f"--langid-cache {OUT.langid_cache(w.task)}" if task(w).mode == "release" else ""),
        source=task_source_arg,
    shell:
        "{params.guard}python -m aicd.splits {params.mode} --task {wildcards.task} --spec {params.spec}"
        " {params.source} --seed {params.seed} {params.langid} --threads {threads}"
        " --out-train {output.train} --out-validation {output.validation} --out-test {output.test}"
        " --report {output.report} > {log} 2>&1"


# Human reference code for calibration (aicd.splits.reference): per calibrated task, human
# programs in none of its train or test rows nor near duplicates of them, on which each
# detector's thresholds at a fixed FPR are set (rule calibrate).
rule calibration_reference:
    input:
        unpack(calibration_reference_inputs),
    output:
        table=OUT.reference(),
        report=OUT.reference_report(),
    log:
        OUT.log("calibration_reference", "{task}"),
    benchmark:
        OUT.benchmark("calibration_reference", "{task}")
    priority: 3  # every calibration of the task waits for it: early, so they fill the cores beside the fits
    conda:
        env("core")
    threads: rule_threads("calibration_reference")
    resources:
        **res("calibration_reference"),
    params:
        guard=guard("calibration_reference"),
        spec=calibration_reference_spec,
        args=calibration_reference_args,
        tasks_dir=lambda w, input: parent(input.train),
        seed=SEED,
    shell:
        "{params.guard}python -m aicd.splits reference --task {wildcards.task} --spec {params.spec}"
        " --tasks-dir {params.tasks_dir} {params.args} --seed {params.seed}"
        " --out {output.table} --report {output.report} > {log} 2>&1"
