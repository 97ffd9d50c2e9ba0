# Task tables: derived from a source with seeded stratified splits, or loaded from a release.


def task_source(w):
    derive = config["tasks"][w.task].get("derive")
    return {"source": f"{R}/sources/{derive['source']}.parquet"} if derive else {}


def task_spec(w):
    spec = config["tasks"][w.task]
    if "derive" in spec:
        return as_arg(spec["derive"])
    return as_arg(config_slice(spec, ["release", "columns", "label_map", "target", "label_audit", "defaults"]))


rule task_split:
    input:
        unpack(task_source),
    output:
        tables=expand(f"{R}/tasks/{{{{task}}}}/{{split}}.parquet", split=SPLITS),
        report=f"{R}/tasks/{{task}}/report.json",
    params:
        mode=lambda w: "derive" if "derive" in config["tasks"][w.task] else "release",
        spec=task_spec,
        seed=lambda w: seed() if "derive" in config["tasks"][w.task] else 0,
        source=lambda w, input: f"--source {input.source}" if "source" in input.keys() else "",
    log:
        f"{R}/logs/task_split/{{task}}.log",
    benchmark:
        f"{R}/benchmarks/task_split/{{task}}.tsv"
    conda:
        ENV
    shell:
        "{PYTHON} -m aicd.splits {params.mode} --task {wildcards.task} --spec {params.spec}"
        " {params.source} --seed {params.seed} --outdir {R}/tasks/{wildcards.task}"
        " --report {output.report} > {log} 2>&1"
