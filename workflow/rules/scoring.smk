# Scores per (task, detector): macro-F1, per-class metrics, confusion matrix, breakdowns.


rule score:
    input:
        predictions=f"{RESULTS}/predictions/{{task}}/{{detector}}.parquet",
        test=f"{DATA}/tasks/{{task}}/test.parquet",
        validation_scores=validation_scores,
    output:
        f"{RESULTS}/scores/{{task}}/{{detector}}.json",
    log:
        f"{RESULTS}/logs/score/{{task}}/{{detector}}.log",
    benchmark:
        f"{RESULTS}/benchmarks/score/{{task}}/{{detector}}.tsv"
    conda:
        env("core")
    threads: 1
    resources:
        mem_mb=lambda w, attempt: 2000 * attempt,
        runtime=30,
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
