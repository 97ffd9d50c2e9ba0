# The input fingerprint (results/inputs.json, aicd.records.fingerprint): what every source read, the
# generator tables in the pool and the release tasks' files, in one hash that the tables, the
# report and the dataset card carry. It reads small JSON files: it runs where snakemake runs.


localrules:
    input_fingerprint,


rule input_fingerprint:
    input:
        sources=expand(f"{RESULTS}/sources/{{source}}.report.json", source=PLAN.report_sources()),
        generations=generation_tables,
    output:
        f"{RESULTS}/inputs.json",  # a run on a base makes none: INPUTS_JSON is the base's
    log:
        f"{RESULTS}/logs/input_fingerprint/inputs.log",
    benchmark:
        f"{RESULTS}/benchmarks/input_fingerprint/inputs.tsv"
    conda:
        env("core")
    params:
        release=lambda w: as_arg(
            {t: config["tasks"][t]["release"] for t, s in PLAN.tasks.items() if s.mode == "release"}
        ),
        code=shlex.quote(CODE_VERSION),
    shell:
        "python -m aicd.records.fingerprint --sources {input.sources} --generations {input.generations}"
        " --release {params.release} --code {params.code} --out {output} > {log} 2>&1"
