# Scores per (task, detector): macro-F1, per-class metrics, confusion matrix, breakdowns.


rule score:
    input:
        predictions=f"{R}/predictions/{{task}}/{{detector}}.parquet",
        test=f"{R}/tasks/{{task}}/test.parquet",
    output:
        f"{R}/scores/{{task}}/{{detector}}.json",
    params:
        labels=lambda w: " ".join(shlex.quote(c) for c in config["tasks"][w.task].get("labels", [])),
        # LLM judges label a stratified sample of the test split, not all of it.
        sample=lambda w: "--sample" if w.detector.startswith("judge_") else "",
    log:
        f"{R}/logs/score/{{task}}/{{detector}}.log",
    benchmark:
        f"{R}/benchmarks/score/{{task}}/{{detector}}.tsv"
    conda:
        ENV
    shell:
        "{PYTHON} -m aicd.scoring --task {wildcards.task} --detector {wildcards.detector}"
        " --predictions {input.predictions} --test {input.test} --labels {params.labels} {params.sample}"
        " --out {output} > {log} 2>&1"
