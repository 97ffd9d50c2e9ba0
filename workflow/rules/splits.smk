# Task tables: cut from the deduplicated pool (the paper's T1-T3), derived from one source
# with seeded stratified splits, or loaded from a release.


def task_mode(w):
    return mode_of(w.task)


def task_source(w):
    spec = config["tasks"][w.task]
    mode = mode_of(w.task)
    if mode == "build":
        return {"source": f"{R}/dataset/pool.parquet"}
    return {"source": f"{R}/sources/{spec['derive']['source']}.parquet"} if mode == "derive" else {}


def task_spec(w):
    spec = config["tasks"][w.task]
    if mode_of(w.task) == "build":
        dedup = {k: v for k, v in {**config["dataset"].get("minhash", {}), **config["dataset"].get("dedup", {})}.items()
                 if k in ("threshold", "num_perm", "false_negative_weight")}
        return as_arg({**spec["build"], "dedup": dedup})
    if mode_of(w.task) == "derive":
        return as_arg(spec["derive"])
    return as_arg(config_slice(spec, ["release", "columns", "label_map", "target", "label_audit", "defaults"]))


rule task_split:
    input:
        unpack(task_source),
    output:
        tables=expand(f"{R}/tasks/{{{{task}}}}/{{split}}.parquet", split=SPLITS),
        report=f"{R}/tasks/{{task}}/report.json",
    params:
        mode=task_mode,
        spec=task_spec,
        seed=lambda w: 0 if task_mode(w) == "release" else seed(),
        source=lambda w, input: "" if "source" not in input.keys()
        else f"--{'pool' if task_mode(w) == 'build' else 'source'} {input.source}",
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
