# Fast-DetectGPT (its own rule: binarised gold, a `criterion` column, and optionally a causal LM
# trained here as its scoring model), the paper's Tables 5-7, its figures and analyses, and
# results/paper_results.md, which the report embeds.


localrules:
    subset_tables,
    paper_figures,
    paper_section,


rule train_causal_lm:
    input:
        train=lambda w: f"{R}/tasks/{lm_spec(w.detector)['task']}/train.parquet",
        validation=lambda w: f"{R}/tasks/{lm_spec(w.detector)['task']}/validation.parquet",
    output:
        directory(f"{R}/lm/{{detector}}"),
    log:
        f"{R}/logs/train_causal_lm/{{detector}}.log",
    benchmark:
        f"{R}/benchmarks/train_causal_lm/{{detector}}.tsv"
    wildcard_constraints:
        detector=one_of([d for d in fdg_detectors() if lm_spec(d)]),
    conda:
        env("neural")
    threads: detector_threads
    resources:
        mem_mb=detector_mem_mb(4000),
        runtime=detector_resource("runtime", 60),
        gpu=detector_resource("gpu", 0),
    params:
        settings=lambda w: as_arg({k: v for k, v in lm_spec(w.detector).items() if k != "task"}),
        seed=seed(),
    shell:
        GUARD + "python -m aicd.lm --train {input.train} --validation {input.validation} --params {params.settings}"
        " --seed {params.seed} --threads {threads} --out {output} > {log} 2>&1"


rule detect_fast_detectgpt:
    input:
        tables=expand(f"{R}/tasks/{{{{task}}}}/{{split}}.parquet", split=SPLITS),
        lm=lambda w: [f"{R}/lm/{w.detector}"] if lm_spec(w.detector) else [],
    output:
        predictions=f"{R}/predictions/{{task}}/{{detector}}.parquet",
        model=f"{R}/models/{{task}}/{{detector}}.json",
    log:
        f"{R}/logs/detect/{{task}}/{{detector}}.log",
    benchmark:
        f"{R}/benchmarks/detect/{{task}}/{{detector}}.tsv"
    wildcard_constraints:
        detector=one_of(fdg_detectors()),
    conda:
        env("neural")
    threads: detector_threads
    resources:
        mem_mb=detector_mem_mb(8000),
        runtime=detector_resource("runtime", 60),
        gpu=detector_resource("gpu", 0),
    params:
        spec=lambda w: as_arg(config_slice(config["detectors"][w.detector], ["kind", "params"])),
        lm=lambda w, input: f"--lm-dir {input.lm}" if input.lm else "",
        tasks_dir=lambda w, input: parent(input.tables[0]),
        seed=seed(),
    shell:
        GUARD + "python -m aicd.detectors.run_fast_detectgpt --spec {params.spec} --tasks-dir {params.tasks_dir}"
        " {params.lm} --seed {params.seed} --threads {threads}"
        " --out {output.predictions} --model {output.model} > {log} 2>&1"


rule subset_tables:
    input:
        scores=all_scores(),
        inputs=INPUTS_JSON,
    output:
        tables=SUBSET_TABLE_FILES,
        summary=f"{R}/tables/subset_tables.json",
    log:
        f"{R}/logs/subset_tables/subset_tables.log",
    benchmark:
        f"{R}/benchmarks/subset_tables/subset_tables.tsv"
    conda:
        env("core")
    params:
        layout=lambda w: as_arg(subset_tables_layout()),
        tables_dir=lambda w, output: parent(output.summary),
    shell:
        "python -m aicd.report.subset_tables --layout {params.layout} --scores {input.scores}"
        " --inputs {input.inputs} --tables-dir {params.tables_dir} > {log} 2>&1"


rule paper_figures:
    input:
        scores=all_scores(),
        measurements=lambda w: dataset_inputs() if built_tasks() else [],
    output:
        index=PAPER_FIGURES_INDEX,
    log:
        f"{R}/logs/paper_figures/paper_figures.log",
    benchmark:
        f"{R}/benchmarks/paper_figures/paper_figures.tsv"
    conda:
        env("core")
    params:
        layout=lambda w: as_arg(figures_layout()),
        measurements=lambda w, input: (f"--measurements {' '.join(input.measurements)}" if input.measurements else ""),
        figures_dir=lambda w, output: parent(output.index),
    shell:
        "python -m aicd.report.paper_figures --layout {params.layout} --scores {input.scores}"
        " {params.measurements} --figures-dir {params.figures_dir} --out {output.index} > {log} 2>&1"


rule analyses:
    input:
        unpack(analyses_inputs),
    output:
        summary=f"{R}/analyses/{{task}}/summary.json",
    log:
        f"{R}/logs/analyses/{{task}}.log",
    benchmark:
        f"{R}/benchmarks/analyses/{{task}}.tsv"
    conda:
        env("core")
    threads: 1
    resources:
        mem_mb=mem_mb(2000, 8),
        runtime=lambda w, attempt: 60 * attempt,
    params:
        args=analyses_args,
        title=lambda w: shlex.quote(config["tasks"][w.task]["title"]),
        titles=lambda w: as_arg({d: config["detectors"][d]["title"] for d in detectors()}),
        out_dir=lambda w, output: parent(output.summary),
        figures_dir=f"{R}/figures",
        seed=seed(),
    shell:
        GUARD + "python -m aicd.report.analyses --task {wildcards.task} --title {params.title} {params.args}"
        " --test {input.test} --titles {params.titles} --seed {params.seed}"
        " --out-dir {params.out_dir} --figures-dir {params.figures_dir} > {log} 2>&1"


rule paper_section:
    input:
        scores=all_scores(),
        tables=SUBSET_TABLE_FILES,
        figures=PAPER_FIGURES_INDEX,
        analyses=expand(f"{R}/analyses/{{task}}/summary.json", task=tasks()),
        fdg=fdg_models(),
    output:
        f"{R}/paper_results.md",
    log:
        f"{R}/logs/paper_section/paper_section.log",
    benchmark:
        f"{R}/benchmarks/paper_section/paper_section.tsv"
    conda:
        env("core")
    params:
        layout=lambda w: as_arg(paper_layout()),
        fdg=lambda w, input: f"--fast-detectgpt {' '.join(input.fdg)}" if input.fdg else "",
        tables_dir=lambda w, input: parent(input.tables[0]),
    shell:
        "python -m aicd.report.paper_section --layout {params.layout} --scores {input.scores}"
        " --tables-dir {params.tables_dir} --figures-index {input.figures} --analyses {input.analyses}"
        " {params.fdg} --out {output} > {log} 2>&1"
