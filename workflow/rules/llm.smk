# The LLM stages: generation per registry model, zero-shot judges per (task, judge, mode),
# and their aggregates (generation report, Table 8). Which models and judges get jobs is the
# config's (generation.enabled, judging.enabled); a job whose model has no key or api_base
# where it runs fails with one line naming the variable to set.


localrules:
    generation_report,
    table8,


rule instructions:
    input:
        sources=lambda w: list(generation_sources(INSTRUCTION_PROTOCOLS).values()),
    output:
        f"{R}/instructions/instructions.parquet",
    log:
        f"{R}/logs/instructions/instructions.log",
    benchmark:
        f"{R}/benchmarks/instructions/instructions.tsv"
    conda:
        env("llm")
    threads: 1
    resources:
        mem_mb=lambda w, attempt: 2000 * attempt,
        runtime=lambda w, attempt: 240 * attempt,
    params:
        model=lambda w: model_arg(GEN["instructor"]),
        sources=lambda w: source_args(generation_sources(INSTRUCTION_PROTOCOLS)),
        protocols=lambda w: as_arg(INSTRUCTION_PROTOCOLS),
        prompts=lambda w: repo_path(GEN["prompts"]),
        llm=lambda w: as_arg(LLM),
        seed=seed(),
    shell:
        GUARD + "python -m aicd.generate instructions --model {params.model} {params.sources}"
        " --prompts {params.prompts} --protocols {params.protocols} --llm {params.llm} --seed {params.seed}"
        " --out {output} > {log} 2>&1"


rule generate:
    input:
        unpack(generate_inputs),
    output:
        table=f"{R}/generations/{{model}}.parquet",
        report=f"{R}/generations/{{model}}.report.json",
    log:
        f"{R}/logs/generate/{{model}}.log",
    benchmark:
        f"{R}/benchmarks/generate/{{model}}.tsv"
    wildcard_constraints:
        model=one_of(GENERATORS),
    conda:
        env("llm")
    threads: 1
    resources:
        mem_mb=lambda w, attempt: 2000 * attempt,
        runtime=lambda w, attempt: 240 * attempt,
    params:
        model=lambda w: model_arg(w.model),
        sources=lambda w: source_args(generation_sources(GEN_PROTOCOLS)),
        protocols=lambda w: as_arg(GEN_PROTOCOLS),
        prompts=lambda w: repo_path(GEN["prompts"]),
        instructions=lambda w, input: (f"--instructions {input.instructions}" if "instructions" in input.keys() else ""),
        llm=lambda w: as_arg(LLM),
        seed=seed(),
    shell:
        GUARD + "python -m aicd.generate generate --model {params.model} {params.sources}"
        " --prompts {params.prompts} --protocols {params.protocols} {params.instructions}"
        " --llm {params.llm} --seed {params.seed} --out {output.table} --report {output.report} > {log} 2>&1"


rule generation_report:
    input:
        expand(f"{R}/generations/{{model}}.report.json", model=GENERATORS),
    output:
        json=f"{R}/generations/report.json",
        md=f"{R}/generations/report.md",
    log:
        f"{R}/logs/generation_report/report.log",
    benchmark:
        f"{R}/benchmarks/generation_report/report.tsv"
    conda:
        env("core")
    params:
        disabled=lambda w: as_arg(
            {"models": [m for m in REGISTRY if m not in GENERATORS], "hint": endpoint_hint(REGISTRY)}
        ),
    shell:
        "python -m aicd.report.llm_tables generation --reports {input} --disabled {params.disabled}"
        " --out-json {output.json} --out-md {output.md} > {log} 2>&1"


rule judge:
    input:
        test=f"{R}/tasks/{{task}}/test.parquet",
    output:
        predictions=f"{R}/predictions/{{task}}/judge_{{judge}}_{{mode}}.parquet",
        report=f"{R}/judges/{{task}}/{{judge}}_{{mode}}.report.json",
    log:
        f"{R}/logs/judge/{{task}}/{{judge}}_{{mode}}.log",
    benchmark:
        f"{R}/benchmarks/judge/{{task}}/{{judge}}_{{mode}}.tsv"
    wildcard_constraints:
        judge=one_of(JUDGES),
    conda:
        env("llm")
    threads: 1
    resources:
        mem_mb=mem_mb(2000, 4),
        runtime=lambda w, attempt: 240 * attempt,
    params:
        model=lambda w: model_arg(JUDGING["judges"][w.judge]["model"]),
        labels=lambda w: " ".join(shlex.quote(c) for c in config["tasks"][w.task]["labels"]),
        target=lambda w: (config["tasks"][w.task].get("derive") or config["tasks"][w.task]).get("target", "label"),
        prompts=lambda w: repo_path(JUDGING["prompts"]),
        fraction=JUDGING.get("fraction"),
        llm=lambda w: as_arg(LLM),
        seed=seed(),
    shell:
        GUARD + "python -m aicd.judge --model {params.model} --mode {wildcards.mode} --test {input.test}"
        " --labels {params.labels} --target {params.target} --prompts {params.prompts}"
        " --fraction {params.fraction} --seed {params.seed} --llm {params.llm}"
        " --out {output.predictions} --report {output.report} > {log} 2>&1"


rule table8:
    input:
        scores=[f"{R}/scores/{t}/judge_{j}_{m}.json" for t in JUDGE_TASKS for j in JUDGES for m in MODES],
        inputs=INPUTS_JSON,
    output:
        tex=f"{R}/tables/table8.tex",
        md=f"{R}/tables/table8.md",
    log:
        f"{R}/logs/table8/table8.log",
    benchmark:
        f"{R}/benchmarks/table8/table8.tsv"
    conda:
        env("core")
    params:
        layout=lambda w: as_arg(table8_layout()),
        tables_dir=lambda w, output: parent(output.tex),
    shell:
        "python -m aicd.report.llm_tables table8 --layout {params.layout} --scores {input.scores}"
        " --inputs {input.inputs} --tables-dir {params.tables_dir} > {log} 2>&1"
