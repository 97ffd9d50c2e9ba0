# The paper's Tables 5-7, its figures and analyses, and results/paper_results.md, which the
# report embeds.


localrules:
    subset_tables,
    paper_figures,
    paper_section,


rule subset_tables:
    input:
        scores=all_scores(),
        inputs=INPUTS_JSON,
    output:
        tables=SUBSET_TABLE_FILES,
        summary=OUT.tab("subset_tables", "json"),
    log:
        OUT.log("subset_tables", "subset_tables"),
    benchmark:
        OUT.benchmark("subset_tables", "subset_tables")
    conda:
        env("core")
    resources:
        **res("subset_tables"),
    params:
        layout=lambda w: as_arg(layouts.subset_tables_layout(PLAN)),
        tables_dir=lambda w, output: parent(output.summary),
    shell:
        "python -m aicd.report subsets --layout {params.layout} --scores {input.scores}"
        " --inputs {input.inputs} --tables-dir {params.tables_dir} > {log} 2>&1"


rule paper_figures:
    input:
        scores=all_scores(),
        measurements=lambda w: dataset_inputs(),
    output:
        index=PAPER_FIGURES_INDEX,
    log:
        OUT.log("paper_figures", "paper_figures"),
    benchmark:
        OUT.benchmark("paper_figures", "paper_figures")
    priority: 3  # the report's longest chain (figures, paper section, report): started once the last score is in
    conda:
        env("core")
    resources:
        **res("paper_figures"),
    params:
        layout=lambda w: as_arg(layouts.figures_layout(PLAN)),
        measurements=lambda w, input: (f"--measurements {' '.join(input.measurements)}" if input.measurements else ""),
        figures_dir=lambda w, output: parent(output.index),
    shell:
        "python -m aicd.report figures --layout {params.layout} --scores {input.scores}"
        " {params.measurements} --figures-dir {params.figures_dir} --out {output.index} > {log} 2>&1"


rule analyses:
    input:
        unpack(analyses_inputs),
    output:
        summary=OUT.analyses(),
    log:
        OUT.log("analyses", "{task}"),
    benchmark:
        OUT.benchmark("analyses", "{task}")
    priority: multiclass_first  # as the task's fits: a many-class task's figures are the long ones
    conda:
        env("core")
    threads: rule_threads("analyses")
    resources:
        **res("analyses"),
    params:
        guard=guard("analyses"),
        args=analyses_args,
        title=lambda w: shlex.quote(task(w).title),
        titles=lambda w: as_arg(analyses_titles(w)),
        out_dir=lambda w, output: parent(output.summary),
        figures_dir=OUT.figures_dir(),
        seed=SEED,
    shell:
        "{params.guard}python -m aicd.report analyses --task {wildcards.task} --title {params.title} {params.args}"
        " --test {input.test} --titles {params.titles} --seed {params.seed}"
        " --out-dir {params.out_dir} --figures-dir {params.figures_dir} > {log} 2>&1"


rule paper_section:
    input:
        scores=all_scores(),
        tables=SUBSET_TABLE_FILES,
        figures=PAPER_FIGURES_INDEX,
        analyses=[analysed(t).analyses(t) for t in PLAN.tasks],
        zero_shot=zero_shot_reports(),
    output:
        OUT.paper_results(),
    log:
        OUT.log("paper_section", "paper_section"),
    benchmark:
        OUT.benchmark("paper_section", "paper_section")
    conda:
        env("core")
    resources:
        **res("paper_section"),
    params:
        layout=lambda w: as_arg(layouts.paper_layout(PLAN)),
        zero_shot=lambda w, input: f"--zero-shot {' '.join(input.zero_shot)}" if input.zero_shot else "",
        tables_dir=lambda w, input: folder_of(input.tables),
    shell:
        "python -m aicd.report paper --layout {params.layout} --scores {input.scores}"
        " --tables-dir {params.tables_dir} --figures-index {input.figures} --analyses {input.analyses}"
        " {params.zero_shot} --out {output} > {log} 2>&1"
