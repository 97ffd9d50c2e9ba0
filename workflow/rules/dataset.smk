# The dataset stage: each source and each generator's table normalized on its own (code
# checks, language identification, Table 3 filters, MinHash signatures), then one pool
# deduplicated jointly, then the dataset card once the task splits exist. Adding a model
# adds one `normalize` job; the pool, the splits and what reads them follow.


localrules:
    dataset_card,


rule normalize:
    input:
        unpack(normalize_inputs),
    output:
        table=f"{R}/dataset/normalized/{{kind}}/{{name}}.parquet",
        report=f"{R}/dataset/normalized/{{kind}}/{{name}}.report.json",
    log:
        f"{R}/logs/normalize/{{kind}}/{{name}}.log",
    benchmark:
        f"{R}/benchmarks/normalize/{{kind}}/{{name}}.tsv"
    conda:
        env("core")
    threads: 4
    resources:
        mem_mb=mem_mb(2000, 6),
        runtime=lambda w, attempt: 240 * attempt,
    params:
        spec=lambda w: as_arg({k: v for k, v in dataset_spec().items() if k != "dedup"}),
        execution=lambda w, input: (f"--execution {input.execution}" if "execution" in input.keys() else ""),
    shell:
        GUARD + "python -m aicd.normalize rows --table {input.table} --name {wildcards.name} --spec {params.spec}"
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
    log:
        f"{R}/logs/dataset_pool/pool.log",
    benchmark:
        f"{R}/benchmarks/dataset_pool/pool.tsv"
    conda:
        env("core")
    threads: 1
    resources:
        mem_mb=mem_mb(4000, 6),
        runtime=lambda w, attempt: 480 * attempt,
    params:
        spec=lambda w: as_arg(dataset_spec()),
        outdir=lambda w, output: parent(output.pool),
    shell:
        GUARD + "python -m aicd.normalize pool --tables {input.tables} --spec {params.spec}"
        " --outdir {params.outdir} > {log} 2>&1"


rule dataset_card:
    input:
        pool=f"{R}/dataset/pool.parquet",
        filter_json=f"{R}/dataset/filter_report.json",
        dedup_json=f"{R}/dataset/dedup_report.json",
        tables=[f"{R}/tasks/{t}/{s}.parquet" for t in built_tasks() for s in SPLITS],
        reports=[f"{R}/tasks/{t}/report.json" for t in built_tasks()],
        sources=expand(f"{R}/sources/{{source}}.report.json", source=DATASET["sources"] if DATASET else []),
        execution=expand(f"{R}/execution/{{name}}.report.json", name=EXEC_NAMES),
        inputs=INPUTS_JSON,
    output:
        card=f"{R}/dataset/README.md",
        counts=f"{R}/dataset/counts.csv",
    log:
        f"{R}/logs/dataset_card/card.log",
    benchmark:
        f"{R}/benchmarks/dataset_card/card.tsv"
    conda:
        env("core")
    params:
        tasks=lambda w: as_arg({t: config["tasks"][t]["title"] for t in built_tasks()}),
        sources=lambda w: as_arg(card_sources()),
        results=lambda w, input: parent(input.inputs),
    shell:
        "python -m aicd.report.card --tasks {params.tasks} --sources {params.sources}"
        " --execution-reports {input.execution} --inputs {input.inputs}"
        " --results {params.results} --card {output.card} --counts {output.counts} > {log} 2>&1"
