# The generation stage: code from each registry model under the configured prompting
# protocols (instructions first, where a protocol needs them), and its report of token and cost
# totals. Which models get jobs is the plan's (generation.enabled); a job whose model has no key
# or api_base where it runs fails with one line naming the variable to set.


localrules:
    generation_report,


rule instructions:
    input:
        sources=lambda w: list(generation_sources(PLAN.instruction_protocols).values()),
    output:
        OUT.instructions(),
    log:
        job=OUT.log("instructions", "instructions"),
        server=OUT.log("instructions", "instructions", suffix=".server.log"),
    benchmark:
        OUT.benchmark("instructions", "instructions")
    conda:
        env("llm")
    threads: lambda w: llm_threads(generation_entry(PLAN.instructor))
    resources:
        **llm_res("instructions", lambda w: generation_entry(PLAN.instructor)),
    params:
        guard=guard("instructions"),
        # the cap rides in the instructor's entry, so a run without one plans as before
        model=lambda w: as_arg(
            with_max_tokens(
                job_entry(generation_entry(PLAN.instructor)), config["generation"].get("instruction_max_tokens")
            )
        ),
        sources=lambda w: source_args(generation_sources(PLAN.instruction_protocols)),
        protocols=lambda w: as_arg(PLAN.instruction_protocols),
        prompts=lambda w: repo_path(config["generation"]["prompts"]),
        llm=lambda w: as_arg(config["llm"]),
        seed=SEED,
    shell:
        "{params.guard}python -m aicd.generate instructions --model {params.model} {params.sources}"
        " --prompts {params.prompts} --protocols {params.protocols} --llm {params.llm} --seed {params.seed}"
        " --server-log {log.server} --out {output} > {log.job} 2>&1"


rule generate:
    input:
        sources=lambda w: list(generation_sources(PLAN.gen_protocols).values()),
        instructions=lambda w: OUT.instructions() if PLAN.instruction_protocols else [],
    output:
        table=OUT.generations(),
        report=OUT.generations_report(),
    log:
        job=OUT.log("generate", "{model}"),
        server=OUT.log("generate", "{model}", suffix=".server.log"),
    benchmark:
        OUT.benchmark("generate", "{model}")
    wildcard_constraints:
        model=one_of(PLAN.generators),
    conda:
        env("llm")
    threads: lambda w: llm_threads(generation_entry(w.model))
    resources:
        **llm_res("generate", lambda w: generation_entry(w.model)),
    params:
        guard=guard("generate"),
        model=lambda w: as_arg(job_entry(generation_entry(w.model))),
        sources=lambda w: source_args(generation_sources(PLAN.gen_protocols)),
        protocols=lambda w: as_arg(PLAN.gen_protocols),
        prompts=lambda w: repo_path(config["generation"]["prompts"]),
        instructions=lambda w, input: f"--instructions {input.instructions}" if input.instructions else "",
        llm=lambda w: as_arg(config["llm"]),
        seed=SEED,
    shell:
        "{params.guard}python -m aicd.generate generate --model {params.model} {params.sources}"
        " --prompts {params.prompts} --protocols {params.protocols} {params.instructions}"
        " --llm {params.llm} --seed {params.seed} --server-log {log.server}"
        " --out {output.table} --report {output.report} > {log.job} 2>&1"


rule generation_report:
    input:
        expand(OUT.generations_report(), model=PLAN.generators),
    output:
        json=OUT.generation_summary("json"),
        md=OUT.generation_summary("md"),
    log:
        OUT.log("generation_report", "report"),
    benchmark:
        OUT.benchmark("generation_report", "report")
    conda:
        env("core")
    resources:
        **res("generation_report"),
    params:
        disabled=lambda w: as_arg(
            {"models": [m for m in MODELS if m not in PLAN.generators], "hint": endpoint_hint(MODELS)}
        ),
    shell:
        "python -m aicd.report generation --reports {input} --disabled {params.disabled}"
        " --out-json {output.json} --out-md {output.md} > {log} 2>&1"
