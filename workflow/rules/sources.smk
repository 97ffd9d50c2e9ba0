# Sources: one table per configured source, in the sample schema, with a report of every
# removed row and of every input read (content hashes: see aicd.records.fingerprint).


rule source:
    output:
        table=OUT.source(),
        report=OUT.source_report(),
    log:
        OUT.log("source", "{source}"),
    benchmark:
        OUT.benchmark("source", "{source}")
    conda:
        env("core")
    threads: rule_threads("source")
    resources:
        **res("source"),
    params:
        guard=guard("source"),
        spec=lambda w: as_arg(source_spec(w.source)),
        seed=SEED,
    shell:
        "{params.guard}python -m aicd.sources --name {wildcards.source} --spec {params.spec}"
        " --seed {params.seed} --out {output.table} --report {output.report} > {log} 2>&1"
