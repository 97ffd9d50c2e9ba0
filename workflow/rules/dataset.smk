# The dataset stage: each source and each generator's table normalized on its own (code
# checks, language identification, Table 3 filters, MinHash signatures), then one pool
# deduplicated jointly, then the dataset card once the task splits exist. Adding a model
# adds one `normalize` job; the pool, the splits and what reads them follow.

DATASET = config.get("dataset")


def dataset_inputs():
    """results/dataset/normalized/{kind}/{name}.parquet for every table in the pool."""
    if not DATASET:
        return []
    names = [("sources", s) for s in DATASET["sources"]]
    if DATASET.get("generations") and GEN:
        names += [("generations", m) for m in GENERATORS]
    return [f"{R}/dataset/normalized/{kind}/{name}.parquet" for kind, name in names]


def dataset_spec():
    return {k: DATASET[k] for k in ("filters", "minhash", "dedup", "langid_min_margin", "execution_filter") if k in DATASET}


def normalize_inputs(w):
    """The table, and its sandbox results when an execution filter is asked for and they exist."""
    inputs = {"table": f"{R}/{w.kind}/{w.name}.parquet"}
    if DATASET and DATASET.get("execution_filter", "none") != "none" and w.name in EXEC_NAMES:
        inputs["execution"] = f"{R}/execution/{w.name}.parquet"
    return inputs


wildcard_constraints:
    kind=r"sources|generations",


rule normalize:
    input:
        unpack(normalize_inputs),
    output:
        table=f"{R}/dataset/normalized/{{kind}}/{{name}}.parquet",
        report=f"{R}/dataset/normalized/{{kind}}/{{name}}.report.json",
    params:
        spec=lambda w: as_arg({k: v for k, v in dataset_spec().items() if k != "dedup"}),
        execution=lambda w, input: f"--execution {input.execution}" if "execution" in input.keys() else "",
    threads: 4
    log:
        f"{R}/logs/normalize/{{kind}}/{{name}}.log",
    benchmark:
        f"{R}/benchmarks/normalize/{{kind}}/{{name}}.tsv"
    conda:
        ENV
    shell:
        "{PYTHON} -m aicd.normalize rows --table {input.table} --name {wildcards.name} --spec {params.spec}"
        " {params.execution} --threads {threads} --out {output.table} --report {output.report} > {log} 2>&1"


rule dataset_pool:
    input:
        tables=dataset_inputs(),
    output:
        pool=f"{R}/dataset/pool.parquet",
        filter_json=f"{R}/dataset/filter_report.json",
        filter_md=f"{R}/dataset/filter_report.md",
        dedup_json=f"{R}/dataset/dedup_report.json",
        dedup_md=f"{R}/dataset/dedup_report.md",
    params:
        spec=lambda w: as_arg(dataset_spec()),
    log:
        f"{R}/logs/dataset_pool/pool.log",
    benchmark:
        f"{R}/benchmarks/dataset_pool/pool.tsv"
    conda:
        ENV
    shell:
        "{PYTHON} -m aicd.normalize pool --tables {input.tables} --spec {params.spec}"
        " --outdir {R}/dataset > {log} 2>&1"


def card_sources():
    """What the card says about each source: where it came from, at which revision."""
    out = {}
    for name in DATASET["sources"]:
        spec = config["sources"][name]
        out[name] = {k: spec[k] for k in ("hub", "revision", "name", "data_dir", "files") if k in spec}
        if "gather" in spec:
            out[name]["gathered_from"] = spec["gather"]["roots"]
    return out


rule dataset_card:
    input:
        pool=rules.dataset_pool.output.pool,
        filter_json=rules.dataset_pool.output.filter_json,
        dedup_json=rules.dataset_pool.output.dedup_json,
        tables=[f"{R}/tasks/{t}/{s}.parquet" for t in built_tasks() for s in SPLITS],
        reports=[f"{R}/tasks/{t}/report.json" for t in built_tasks()],
        sources=expand(f"{R}/sources/{{source}}.report.json", source=DATASET["sources"] if DATASET else []),
        execution=expand(f"{R}/execution/{{name}}.report.json", name=EXEC_NAMES),
        inputs=rules.inputs.output,
    output:
        card=f"{R}/dataset/README.md",
        counts=f"{R}/dataset/counts.csv",
    params:
        tasks=lambda w: as_arg({t: config["tasks"][t]["title"] for t in built_tasks()}),
        sources=lambda w: as_arg(card_sources()),
    log:
        f"{R}/logs/dataset_card/card.log",
    benchmark:
        f"{R}/benchmarks/dataset_card/card.tsv"
    conda:
        ENV
    shell:
        "{PYTHON} -m aicd.report.card --tasks {params.tasks} --sources {params.sources}"
        " --execution-reports {input.execution} --inputs {input.inputs}"
        " --results {R} --card {output.card} --counts {output.counts} > {log} 2>&1"


def dataset_targets():
    return [f"{R}/dataset/README.md"] if DATASET and built_tasks() else []
