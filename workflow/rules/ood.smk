# The out-of-distribution protocol (config/ood.yaml): each split is a task of its own (`ood:`
# in its config entry) cut from a source by aicd.splits.ood, scored like any task;
# results/tables/ood.{md,tex} puts every detector on every split side by side.


localrules:
    ood_table,
    loco_table,


rule ood_split:
    input:
        train=lambda w: OUT.source(task(w).ood["train"]) if task(w).ood.get("train") else [],
        test=lambda w: OUT.source(task(w).ood["test"]) if task(w).ood.get("test") else [],
        collections=lambda w: [OUT.source(s) for s in PLAN.loco_sources(w.task)],
    output:
        train=OUT.split(split="train"),
        validation=OUT.split(split="validation"),
        test=OUT.split(split="test"),
        report=OUT.task_report(),
    log:
        OUT.log("ood_split", "{task}"),
    benchmark:
        OUT.benchmark("ood_split", "{task}")
    wildcard_constraints:
        task=one_of(PLAN.ood_tasks()),
    conda:
        env("core")
    threads: rule_threads("ood_split")
    resources:
        **res("ood_split"),
    params:
        guard=guard("ood_split"),
        spec=lambda w: as_arg(task(w).ood),
        train=lambda w, input: f"--train-source {input.train}" if input.train else "",
        test=lambda w, input: f"--test-source {input.test}" if input.test else "",
        sources=lambda w, input: (
            "--sources " + " ".join(f"{s}={p}" for s, p in zip(PLAN.loco_sources(w.task), input.collections))
            if input.collections
            else ""
        ),
        seed=SEED,
    shell:
        "{params.guard}python -m aicd.splits ood --task {wildcards.task} --spec {params.spec} {params.train}"
        " {params.test} {params.sources} --seed {params.seed} --out-train {output.train} --out-validation {output.validation}"
        " --out-test {output.test} --report {output.report} > {log} 2>&1"


rule ood_table:
    input:
        scores=lambda w: [
            made(t, d).scores(t, d) for t, d in PLAN.pairs if t in PLAN.ood_tasks() and t not in PLAN.loco_tasks()
        ],
        perturbed=[made(t, d).test_set_scores(t, s, d) for t, s, d in PLAN.ood_perturbed_scores()],
    output:
        md=OUT.tab("ood", "md"),
        tex=OUT.tab("ood", "tex"),
    log:
        OUT.log("ood_table", "ood_table"),
    benchmark:
        OUT.benchmark("ood_table", "ood_table")
    conda:
        env("core")
    resources:
        **res("ood_table"),
    params:
        layout=lambda w: as_arg(layouts.ood_layout(PLAN)),
    shell:
        "python -m aicd.report ood --layout {params.layout} --scores {input.scores} --perturbed {input.perturbed}"
        " --out-md {output.md} --out-tex {output.tex} > {log} 2>&1"


# The leave-one-collection-out protocol (config/loco.yaml): each fold a task whose test split is
# one held-out collection; the table reads every detector's test predictions and validation
# scores (the validation threshold, the calibrated half, the oracle, mean and worst) and the
# calibrate jobs' test views (thresholds set on the fold's reference table: the default reference).
rule loco_table:
    input:
        predictions=lambda w: [made(t, d).predictions(t, d) for t, d in loco_pairs()],
        validation=lambda w: [made(t, d).validation_scores(t, d) for t, d in loco_pairs()],
        views=lambda w: [
            calibrated(t, d).calibration_view(t, d) for t, d in loco_pairs() if (t, d) in PLAN.calibration_pairs()
        ],
    output:
        md=OUT.tab("loco", "md"),
        tex=OUT.tab("loco", "tex"),
        json=OUT.tab("loco", "json"),
    log:
        OUT.log("loco_table", "loco_table"),
    benchmark:
        OUT.benchmark("loco_table", "loco_table")
    conda:
        env("core")
    resources:
        **res("loco_table"),
    params:
        layout=lambda w: as_arg(layouts.loco_layout(PLAN)),
        seed=SEED,
        fpr=lambda w: config["calibration"]["view_fpr"],  # the calibrated views' target: the table's heading
    shell:
        "python -m aicd.report loco --layout {params.layout} --predictions {input.predictions}"
        " --validation-scores {input.validation} --calibration-views {input.views} --seed {params.seed}"
        " --fpr {params.fpr}"
        " --out-md {output.md} --out-tex {output.tex} --out-json {output.json} > {log} 2>&1"
