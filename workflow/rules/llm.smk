# The LLM stages: generation per registry model, zero-shot judges per (task, judge, mode),
# and their aggregates (generation report, Table 8). Which models and judges get jobs is the
# plan's (generation.enabled, judging.enabled); a job whose model has no key or api_base
# where it runs fails with one line naming the variable to set.


localrules:
    generation_report,
    generator_card,
    table8,


rule instructions:
    input:
        sources=lambda w: list(generation_sources(PLAN.instruction_protocols).values()),
    output:
        f"{RESULTS}/instructions/instructions.parquet",
    log:
        job=f"{RESULTS}/logs/instructions/instructions.log",
        server=f"{RESULTS}/logs/instructions/instructions.server.log",
    benchmark:
        f"{RESULTS}/benchmarks/instructions/instructions.tsv"
    conda:
        env("llm")
    threads: lambda w: llm_threads(PLAN.instructor)
    resources:
        mem_mb=lambda w, attempt: llm_mem_mb(PLAN.instructor, 2000)(w, attempt),
        runtime=lambda w, attempt: 240 * attempt,
    params:
        guard=guard("instructions"),
        model=lambda w: model_arg(PLAN.instructor),
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
        instructions=lambda w: f"{RESULTS}/instructions/instructions.parquet" if PLAN.instruction_protocols else [],
    output:
        table=f"{RESULTS}/generations/{{model}}.parquet",
        report=f"{RESULTS}/generations/{{model}}.report.json",
    log:
        job=f"{RESULTS}/logs/generate/{{model}}.log",
        server=f"{RESULTS}/logs/generate/{{model}}.server.log",
    benchmark:
        f"{RESULTS}/benchmarks/generate/{{model}}.tsv"
    wildcard_constraints:
        model=one_of(PLAN.generators),
    conda:
        env("llm")
    threads: lambda w: llm_threads(w.model)
    resources:
        mem_mb=lambda w, attempt: llm_mem_mb(w.model, 2000)(w, attempt),
        runtime=lambda w, attempt: 240 * attempt,
    params:
        guard=guard("generate"),
        model=lambda w: model_arg(w.model),
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
        expand(f"{RESULTS}/generations/{{model}}.report.json", model=PLAN.generators),
    output:
        json=f"{RESULTS}/generations/report.json",
        md=f"{RESULTS}/generations/report.md",
    log:
        f"{RESULTS}/logs/generation_report/report.log",
    benchmark:
        f"{RESULTS}/benchmarks/generation_report/report.tsv"
    conda:
        env("core")
    params:
        disabled=lambda w: as_arg(
            {"models": [m for m in MODELS if m not in PLAN.generators], "hint": endpoint_hint(MODELS)}
        ),
    shell:
        "python -m aicd.report generation --reports {input} --disabled {params.disabled}"
        " --out-json {output.json} --out-md {output.md} > {log} 2>&1"


# A generator's card: its requests, its code's sandbox outcomes and filter counts, and how every
# fitted detector does on its code, by protocol (aicd.report.generator_card).
rule generator_card:
    input:
        unpack(generator_card_inputs),
    output:
        md=f"{RESULTS}/generators/{{model}}.md",
        json=f"{RESULTS}/generators/{{model}}.json",
    log:
        f"{RESULTS}/logs/generator_card/{{model}}.log",
    benchmark:
        f"{RESULTS}/benchmarks/generator_card/{{model}}.tsv"
    wildcard_constraints:
        model=one_of(PLAN.generators),
    conda:
        env("core")
    params:
        model=lambda w: model_arg(w.model),
        scored=lambda w: as_arg(generator_card_scored(w.model)),
        titles=lambda w: as_arg({d: det.title for d, det in PLAN.detectors.items()}),
        args=generator_card_args,
    shell:
        "python -m aicd.report generator-card --model {params.model} --report {input.report}"
        " --generations {input.generations} {params.args} --scored {params.scored} --titles {params.titles}"
        " --out-md {output.md} --out-json {output.json} > {log} 2>&1"


rule judge:
    input:
        test=f"{RESULTS}/tasks/{{task}}/test.parquet",
    output:
        predictions=f"{RESULTS}/predictions/{{task}}/judge_{{judge}}_{{mode}}.parquet",
        report=f"{RESULTS}/judges/{{task}}/{{judge}}_{{mode}}.report.json",
    log:
        job=f"{RESULTS}/logs/judge/{{task}}/{{judge}}_{{mode}}.log",
        server=f"{RESULTS}/logs/judge/{{task}}/{{judge}}_{{mode}}.server.log",
    benchmark:
        f"{RESULTS}/benchmarks/judge/{{task}}/{{judge}}_{{mode}}.tsv"
    wildcard_constraints:
        judge=one_of(PLAN.judges),
    conda:
        env("llm")
    threads: lambda w: llm_threads(PLAN.judges[w.judge]["model"])
    resources:
        mem_mb=lambda w, input, attempt: llm_mem_mb(PLAN.judges[w.judge]["model"], 2000 + 4 * input.size_mb)(w, attempt),
        runtime=lambda w, attempt: 240 * attempt,
    params:
        guard=guard("judge"),
        model=lambda w: model_arg(PLAN.judges[w.judge]["model"]),
        labels=lambda w: labels_arg(task(w).labels),
        target=lambda w: (config["tasks"][w.task].get("derive") or config["tasks"][w.task]).get("target", "label"),
        prompts=lambda w: repo_path(config["judging"]["prompts"]),
        fraction=lambda w: config["judging"]["fraction"],
        sample=lambda w: judge_sample_args(),
        mode_params=lambda w: as_arg((PLAN.judges[w.judge].get("params") or {}).get(w.mode, {})),
        llm=lambda w: as_arg(config["llm"]),
        seed=SEED,
    shell:
        "{params.guard}python -m aicd.judge --model {params.model} --mode {wildcards.mode} --test {input.test}"
        " --task {wildcards.task}"
        " --labels {params.labels} --target {params.target} --prompts {params.prompts}"
        " --fraction {params.fraction} {params.sample} --params {params.mode_params} --seed {params.seed}"
        " --llm {params.llm} --server-log {log.server}"
        " --out {output.predictions} --report {output.report} > {log.job} 2>&1"


rule table8:
    input:
        scores=[
            f"{DATA}/scores/{t}/judge_{j}_{m}.json" for t in PLAN.judge_tasks for j in PLAN.judges for m in PLAN.modes
        ],
        reports=[
            f"{DATA}/judges/{t}/{j}_{m}.report.json" for t in PLAN.judge_tasks for j in PLAN.judges for m in PLAN.modes
        ],
        inputs=INPUTS_JSON,
    output:
        tex=f"{RESULTS}/tables/table8.tex",
        md=f"{RESULTS}/tables/table8.md",
    log:
        f"{RESULTS}/logs/table8/table8.log",
    benchmark:
        f"{RESULTS}/benchmarks/table8/table8.tsv"
    conda:
        env("core")
    params:
        layout=lambda w: as_arg(PLAN.table8_layout(endpoint_hint(MODELS))),
        tables_dir=lambda w, output: parent(output.tex),
    shell:
        "python -m aicd.report table8 --layout {params.layout} --scores {input.scores} --reports {input.reports}"
        " --inputs {input.inputs} --tables-dir {params.tables_dir} > {log} 2>&1"
