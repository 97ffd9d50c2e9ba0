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
    release = config_slice(spec, ["release", "columns", "label_map", "target", "label_audit", "defaults"])
    if "build" in spec:  # the paper's task: which test subsets the release can be given (see release_language)
        release["paper"] = config_slice(spec["build"], ["kind", "seen_languages", "seen_domains"])
    return as_arg(release)


def task_threads(w):
    """Language identification of release rows runs in parallel (capped by --cores)."""
    return 16 if task_mode(w) == "release" else 1


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
        # id -> language per split, kept outside the outputs so a rerun reuses it
        langid=lambda w: f"--langid-cache {R}/cache/langid/{w.task}" if task_mode(w) == "release" else "",
        source=lambda w, input: "" if "source" not in input.keys()
        else f"--{'pool' if task_mode(w) == 'build' else 'source'} {input.source}",
    threads: task_threads
    log:
        f"{R}/logs/task_split/{{task}}.log",
    benchmark:
        f"{R}/benchmarks/task_split/{{task}}.tsv"
    conda:
        ENV
    shell:
        "{PYTHON} -m aicd.splits {params.mode} --task {wildcards.task} --spec {params.spec}"
        " {params.source} --seed {params.seed} {params.langid} --threads {threads} --outdir {R}/tasks/{wildcards.task}"
        " --report {output.report} > {log} 2>&1"
