# The dataset stage: each source and each generator's table normalized on its own (code
# checks, language identification, Table 3 filters, MinHash signatures), then one pool
# deduplicated jointly, then the dataset card once the task splits exist. Adding a model
# adds one `normalize` job; the pool, the splits and what reads them follow.


localrules:
    dataset_card,


rule normalize:
    input:
        table=OUT.table(),
        execution=lambda w: (
            OUT.execution(w.name)
            if dataset_spec().get("execution_filter", schema_default("dataset.execution_filter")) != "none"
            and w.name in PLAN.executions
            else []
        ),
    output:
        table=OUT.normalized(),
        report=OUT.normalized_report(),
    log:
        OUT.log("normalize", "{kind}", "{name}"),
    benchmark:
        OUT.benchmark("normalize", "{kind}", "{name}")
    # the chain every later job waits for (normalize, pool, splits) goes first (BENCHMARKS.md)
    priority: 20
    conda:
        env("core")
    # 8: the largest source (DroidCollection, ~1 CPU-hour per 4 threads at the paper's scale)
    # is the dataset stage's critical path (BENCHMARKS.md, paper scale); dataset.resources.threads
    # lowers it (the demo's 1: beside a one-thread job on 2 cores instead of waiting for both)
    threads: normalize_threads
    resources:
        **res("normalize"),
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
        pool=OUT.pool(),
        filter_json=OUT.dataset_report("filter_report", "json"),
        filter_md=OUT.dataset_report("filter_report", "md"),
        dedup_json=OUT.dataset_report("dedup_report", "json"),
        dedup_md=OUT.dataset_report("dedup_report", "md"),
    log:
        OUT.log("dataset_pool", "pool"),
    benchmark:
        OUT.benchmark("dataset_pool", "pool")
    priority: 20  # as normalize
    conda:
        env("core")
    threads: rule_threads("dataset_pool")
    resources:
        **res("dataset_pool"),
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
        pool=OUT.pool(),
        filter_json=OUT.dataset_report("filter_report", "json"),
        dedup_json=OUT.dataset_report("dedup_report", "json"),
        tables=[OUT.split(t, s) for t in PLAN.built_tasks() for s in SPLITS],
        reports=[OUT.task_report(t) for t in PLAN.built_tasks()],
        sources=expand(OUT.source_report(), source=PLAN.dataset_sources),
        execution=expand(OUT.execution_report(), name=PLAN.executions),
        inputs=INPUTS_JSON,
    output:
        card=OUT.dataset_card(),
        counts=OUT.dataset_counts(),
    log:
        OUT.log("dataset_card", "card"),
    benchmark:
        OUT.benchmark("dataset_card", "card")
    conda:
        env("core")
    resources:
        **res("dataset_card"),
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
