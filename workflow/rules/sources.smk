# Sources: one table per configured source, in the sample schema, with a report of every
# removed row.


rule source:
    output:
        table=f"{R}/sources/{{source}}.parquet",
        report=f"{R}/sources/{{source}}.report.json",
    params:
        spec=lambda w: as_arg(config["sources"][w.source]),
        seed=seed(),
    log:
        f"{R}/logs/source/{{source}}.log",
    benchmark:
        f"{R}/benchmarks/source/{{source}}.tsv"
    conda:
        ENV
    shell:
        "{PYTHON} -m aicd.sources --name {wildcards.source} --spec {params.spec}"
        " --seed {params.seed} --out {output.table} --report {output.report} > {log} 2>&1"
