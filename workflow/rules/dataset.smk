# The dataset stage: each source and each generator's table normalized on its own (code
# checks, language identification, Table 3 filters, MinHash signatures), then one pool
# deduplicated jointly, then the dataset card once the task splits exist. Adding a model
# adds one `normalize` job; the pool, the splits and what reads them follow.


localrules:
    dataset_card,


rule normalize:
    input:
        table=f"{RESULTS}/{{kind}}/{{name}}.parquet",
        execution=lambda w: (
            f"{RESULTS}/execution/{w.name}.parquet"
            if dataset_spec().get("execution_filter", "none") != "none" and w.name in PLAN.executions
            else []
        ),
    output:
        table=f"{RESULTS}/dataset/normalized/{{kind}}/{{name}}.parquet",
        report=f"{RESULTS}/dataset/normalized/{{kind}}/{{name}}.report.json",
    log:
        f"{RESULTS}/logs/normalize/{{kind}}/{{name}}.log",
    benchmark:
        f"{RESULTS}/benchmarks/normalize/{{kind}}/{{name}}.tsv"
    # the chain every later job waits for (normalize, pool, splits) goes first (BENCHMARKS.md)
    priority: 20
    conda:
        env("core")
    # 8: the largest source (DroidCollection, ~1 CPU-hour per 4 threads at the paper's scale)
    # is the dataset stage's critical path (BENCHMARKS.md, paper scale); dataset.resources.threads
    # lowers it (the demo's 1: beside a one-thread job on 2 cores instead of waiting for both)
    threads: lambda w: min(8, int((dataset_spec().get("resources") or {}).get("threads", 8)))
    resources:
        mem_mb=mem_mb(2000, 6),
        runtime=lambda w, attempt: 240 * attempt,
    params:
        guard=guard("normalize"),
        spec=lambda w: as_arg(
            config_slice(dataset_spec(), ["filters", "minhash", "langid_min_margin", "execution_filter"])
        ),
        execution=lambda w, input: f"--execution {input.execution}" if input.execution else "",
    shell:
        "{params.guard}python -m aicd.normalize rows --table {input.table} --name {wildcards.name} --spec {params.spec}"
        " {params.execution} --threads {threads} --out {output.table} --report {output.report} > {log} 2>&1"


rule dataset_pool:
    input:
        tables=dataset_inputs(),
    output:
        pool=f"{RESULTS}/dataset/pool.parquet",
        filter_json=f"{RESULTS}/dataset/filter_report.json",
        filter_md=f"{RESULTS}/dataset/filter_report.md",
        dedup_json=f"{RESULTS}/dataset/dedup_report.json",
        dedup_md=f"{RESULTS}/dataset/dedup_report.md",
    log:
        f"{RESULTS}/logs/dataset_pool/pool.log",
    benchmark:
        f"{RESULTS}/benchmarks/dataset_pool/pool.tsv"
    priority: 20  # as normalize
    conda:
        env("core")
    threads: 1
    resources:
        mem_mb=mem_mb(4000, 6),
        runtime=lambda w, attempt: 480 * attempt,
    params:
        guard=guard("dataset_pool"),
        spec=lambda w: as_arg(
            config_slice(PLAN.dataset, ["filters", "minhash", "dedup", "langid_min_margin", "execution_filter"])
        ),
        outdir=lambda w, output: parent(output.pool),
    shell:
        "{params.guard}python -m aicd.normalize pool --tables {input.tables} --spec {params.spec}"
        " --outdir {params.outdir} > {log} 2>&1"


rule dataset_card:
    input:
        pool=f"{RESULTS}/dataset/pool.parquet",
        filter_json=f"{RESULTS}/dataset/filter_report.json",
        dedup_json=f"{RESULTS}/dataset/dedup_report.json",
        tables=[f"{RESULTS}/tasks/{t}/{s}.parquet" for t in PLAN.built_tasks() for s in SPLITS],
        reports=[f"{RESULTS}/tasks/{t}/report.json" for t in PLAN.built_tasks()],
        sources=expand(f"{RESULTS}/sources/{{source}}.report.json", source=PLAN.dataset_sources),
        execution=expand(f"{RESULTS}/execution/{{name}}.report.json", name=PLAN.executions),
        inputs=INPUTS_JSON,
    output:
        card=f"{RESULTS}/dataset/README.md",
        counts=f"{RESULTS}/dataset/counts.csv",
    log:
        f"{RESULTS}/logs/dataset_card/card.log",
    benchmark:
        f"{RESULTS}/benchmarks/dataset_card/card.tsv"
    conda:
        env("core")
    params:
        tasks=lambda w: as_arg({t: PLAN.tasks[t].title for t in PLAN.built_tasks()}),
        sources=lambda w: as_arg(
            {
                n: config_slice(config["sources"][n], ["hub", "revision", "name", "data_dir", "files"])
                | (
                    {"gathered_from": config["sources"][n]["gather"]["roots"]}
                    if "gather" in config["sources"][n]
                    else {}
                )
                for n in PLAN.dataset_sources
            }
        ),
        results=lambda w, input: parent(input.inputs),
    shell:
        "python -m aicd.report card --tasks {params.tasks} --sources {params.sources}"
        " --execution-reports {input.execution} --inputs {input.inputs}"
        " --results {params.results} --card {output.card} --counts {output.counts} > {log} 2>&1"
