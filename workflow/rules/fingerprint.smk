# The input fingerprint (results/inputs.json, aicd.records.fingerprint): what every source read, the
# generator tables in the pool and the release tasks' files, in one hash that the tables, the
# report and the dataset card carry. It reads small JSON files: it runs where snakemake runs.


localrules:
    input_fingerprint,


rule input_fingerprint:
    input:
        sources=expand(OUT.source_report(), source=PLAN.report_sources()),
        generations=generation_tables,
    output:
        OUT.inputs(),  # a run on a base makes none: INPUTS_JSON is the base's
    log:
        OUT.log("input_fingerprint", "inputs"),
    benchmark:
        OUT.benchmark("input_fingerprint", "inputs")
    conda:
        env("core")
    resources:
        **res("input_fingerprint"),
    params:
        release=lambda w: as_arg(
            {t: config["tasks"][t]["release"] for t, s in PLAN.tasks.items() if s.mode == "release"}
        ),
        code=shlex.quote(CODE_VERSION),
    shell:
        "python -m aicd.records.fingerprint --sources {input.sources} --generations {input.generations}"
        " --release {params.release} --code {params.code} --out {output} > {log} 2>&1"
