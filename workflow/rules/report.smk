# The paper's numbers beside ours (reproduction), Table 4, the threshold metrics,
# confusion-matrix figures and results/report.md, and each generator's card. They only read small
# JSON files: they run where snakemake runs.


localrules:
    reproduction,
    report,
    generator_card,


rule reproduction:
    input:
        scores=all_scores(),
        judge_scores=judge_scores(),
        subset_tables=f"{RESULTS}/tables/subset_tables.json",
        tasks=expand(f"{DATA}/tasks/{{task}}/report.json", task=PLAN.tasks),
        inputs=INPUTS_JSON,
    output:
        md=f"{RESULTS}/tables/reproduction.md",
        tex=f"{RESULTS}/tables/reproduction.tex",
        html=report(f"{RESULTS}/tables/reproduction.html", caption="../report/reproduction.rst", category="Tables"),
        json=f"{RESULTS}/tables/reproduction.json",
        figures=expand(f"{RESULTS}/figures/reproduction_{{task}}.pdf", task=PLAN.paper_kind_tasks()),
        figures_png=report(
            expand(f"{RESULTS}/figures/reproduction_{{task}}.png", task=PLAN.paper_kind_tasks()),
            caption="../report/reproduction_figure.rst",
            category="Figures",
        ),
    log:
        f"{RESULTS}/logs/reproduction/reproduction.log",
    benchmark:
        f"{RESULTS}/benchmarks/reproduction/reproduction.tsv"
    conda:
        env("core")
    params:
        layout=lambda w: as_arg(layouts.reproduction_layout(PLAN)),
        tables_dir=lambda w, output: parent(output.md),
        figures_dir=lambda w, output: os.path.join(os.path.dirname(parent(output.md)), "figures"),
    shell:
        "python -m aicd.report reproduction --layout {params.layout} --scores {input.scores}"
        " --judge-scores {input.judge_scores} --subset-tables {input.subset_tables} --task-reports {input.tasks}"
        " --inputs {input.inputs} --tables-dir {params.tables_dir} --figures-dir {params.figures_dir} > {log} 2>&1"


rule report:
    input:
        reproduction=f"{RESULTS}/tables/reproduction.md",
        inputs=INPUTS_JSON,
        scores=all_scores(),
        sources=expand(f"{DATA}/sources/{{source}}.report.json", source=PLAN.report_sources()),
        dataset=lambda w: (
            [f"{DATA}/dataset/filter_report.json", f"{DATA}/dataset/dedup_report.json"] if PLAN.dataset else []
        ),
        tasks=expand(f"{DATA}/tasks/{{task}}/report.json", task=PLAN.tasks),
        paper=f"{RESULTS}/paper_results.md",
        test_set_scores=[f"{made_by(t, d)}/scores/{t}/test_sets/{s}/{d}.json" for t, s, d in PLAN.test_set_plan()],
        test_set_reports=sorted({f"{DATA}/tasks/{t}/test_sets/{s}.report.json" for t, s, _ in PLAN.test_set_plan()}),
        # each generator's skipped prompts and dropped rows (a run on a base has them in the base's report)
        generator_cards=[] if BASE else expand(f"{RESULTS}/generators/{{model}}.json", model=PLAN.generators),
        calibrated=calibration_views(),
        calibration_reports=calibration_reports(),
    output:
        tex=f"{RESULTS}/tables/table4.tex",
        md=f"{RESULTS}/tables/table4.md",
        html=report(f"{RESULTS}/tables/table4.html", caption="../report/table4.rst", category="Tables"),
        thresholds_md=f"{RESULTS}/tables/thresholds.md",
        thresholds_tex=f"{RESULTS}/tables/thresholds.tex",
        thresholds_html=report(
            f"{RESULTS}/tables/thresholds.html", caption="../report/thresholds.rst", category="Tables"
        ),
        calibrated_md=f"{RESULTS}/tables/calibrated.md",
        calibrated_tex=f"{RESULTS}/tables/calibrated.tex",
        calibrated_html=report(
            f"{RESULTS}/tables/calibrated.html", caption="../report/calibrated.rst", category="Tables"
        ),
        figures=expand(f"{RESULTS}/figures/confusion_{{task}}.pdf", task=PLAN.tasks),
        figures_png=report(
            expand(f"{RESULTS}/figures/confusion_{{task}}.png", task=PLAN.tasks),
            caption="../report/confusion.rst",
            category="Figures",
        ),
        report=f"{RESULTS}/report.md",
    log:
        f"{RESULTS}/logs/report/report.log",
    benchmark:
        f"{RESULTS}/benchmarks/report/report.tsv"
    conda:
        env("core")
    params:
        layout=lambda w: as_arg(layouts.report_layout(PLAN)),
        tables_dir=lambda w, output: parent(output.tex),
        figures_dir=lambda w, output: folder_of(output.figures),
    shell:
        "python -m aicd.report report --layout {params.layout} --scores {input.scores} --inputs {input.inputs}"
        " --data-reports {input.sources} {input.dataset} {input.tasks}"
        " --tables-dir {params.tables_dir} --figures-dir {params.figures_dir} --report {output.report}"
        " --paper-section {input.paper} --test-set-scores {input.test_set_scores}"
        " --test-set-reports {input.test_set_reports} --generator-cards {input.generator_cards}"
        " --reproduction {input.reproduction}"
        " --calibrated {input.calibrated} --calibration-reports {input.calibration_reports} > {log} 2>&1"


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
        model=lambda w: as_arg(MODELS[w.model]),  # the whole entry: the card says who made it
        scored=lambda w: as_arg(generator_card_scored(w.model)),
        titles=lambda w: as_arg({d: det.title for d, det in PLAN.detectors.items()}),
        args=generator_card_args,
    shell:
        "python -m aicd.report generator-card --model {params.model} --report {input.report}"
        " --generations {input.generations} {params.args} --scored {params.scored} --titles {params.titles}"
        " --out-md {output.md} --out-json {output.json} > {log} 2>&1"
