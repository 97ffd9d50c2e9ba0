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
        subset_tables=OUT.tab("subset_tables", "json"),
        tasks=expand(DATA_OUT.task_report(), task=PLAN.tasks),
        inputs=INPUTS_JSON,
    output:
        md=OUT.tab("reproduction", "md"),
        tex=OUT.tab("reproduction", "tex"),
        html=report(OUT.tab("reproduction", "html"), caption="../report/reproduction.rst", category="Tables"),
        json=OUT.tab("reproduction", "json"),
        figures=expand(OUT.figure("reproduction_{task}", "pdf"), task=PLAN.paper_kind_tasks()),
        figures_png=report(
            expand(OUT.figure("reproduction_{task}", "png"), task=PLAN.paper_kind_tasks()),
            caption="../report/reproduction_figure.rst",
            category="Figures",
        ),
    log:
        OUT.log("reproduction", "reproduction"),
    benchmark:
        OUT.benchmark("reproduction", "reproduction")
    conda:
        env("core")
    resources:
        **res("reproduction"),
    params:
        layout=lambda w: as_arg(layouts.reproduction_layout(PLAN)),
        tables_dir=lambda w, output: parent(output.md),
        figures_dir=lambda w, output: OUT.figures_dir(),
    shell:
        "python -m aicd.report reproduction --layout {params.layout} --scores {input.scores}"
        " --judge-scores {input.judge_scores} --subset-tables {input.subset_tables} --task-reports {input.tasks}"
        " --inputs {input.inputs} --tables-dir {params.tables_dir} --figures-dir {params.figures_dir} > {log} 2>&1"


rule report:
    input:
        reproduction=OUT.tab("reproduction", "md"),
        inputs=INPUTS_JSON,
        scores=all_scores(),
        sources=expand(DATA_OUT.source_report(), source=PLAN.report_sources()),
        dataset=lambda w: (
            [DATA_OUT.dataset_report("filter_report", "json"), DATA_OUT.dataset_report("dedup_report", "json")]
            if PLAN.dataset
            else []
        ),
        tasks=expand(DATA_OUT.task_report(), task=PLAN.tasks),
        paper=OUT.paper_results(),
        test_set_scores=[made(t, d).test_set_scores(t, s, d) for t, s, d in PLAN.test_set_plan()],
        test_set_reports=sorted({DATA_OUT.test_set_report(t, s) for t, s, _ in PLAN.test_set_plan()}),
        # each generator's skipped prompts and dropped rows (a run on a base has them in the base's report)
        generator_cards=[] if BASE else expand(OUT.generator_card("json"), model=PLAN.generators),
        calibrated=calibration_views(),
        calibration_reports=calibration_reports(),
    output:
        tex=OUT.tab("table4", "tex"),
        md=OUT.tab("table4", "md"),
        html=report(OUT.tab("table4", "html"), caption="../report/table4.rst", category="Tables"),
        thresholds_md=OUT.tab("thresholds", "md"),
        thresholds_tex=OUT.tab("thresholds", "tex"),
        thresholds_html=report(OUT.tab("thresholds", "html"), caption="../report/thresholds.rst", category="Tables"),
        calibrated_md=OUT.tab("calibrated", "md"),
        calibrated_tex=OUT.tab("calibrated", "tex"),
        calibrated_html=report(OUT.tab("calibrated", "html"), caption="../report/calibrated.rst", category="Tables"),
        figures=expand(OUT.figure("confusion_{task}", "pdf"), task=PLAN.tasks),
        figures_png=report(
            expand(OUT.figure("confusion_{task}", "png"), task=PLAN.tasks),
            caption="../report/confusion.rst",
            category="Figures",
        ),
        report=OUT.report(),
    log:
        OUT.log("report", "report"),
    benchmark:
        OUT.benchmark("report", "report")
    conda:
        env("core")
    resources:
        **res("report"),
    params:
        layout=lambda w: as_arg(layouts.report_layout(PLAN, MODELS)),
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
        md=OUT.generator_card("md"),
        json=OUT.generator_card("json"),
    log:
        OUT.log("generator_card", "{model}"),
    benchmark:
        OUT.benchmark("generator_card", "{model}")
    wildcard_constraints:
        model=one_of(PLAN.generators),
    conda:
        env("core")
    resources:
        **res("generator_card"),
    params:
        model=lambda w: as_arg(generation_entry(w.model)),  # the whole entry: who made it, how it was served
        scored=lambda w: as_arg(generator_card_scored(w.model)),
        titles=lambda w: as_arg({d: det.title for d, det in PLAN.detectors.items()}),
        args=generator_card_args,
    shell:
        "python -m aicd.report generator-card --model {params.model} --report {input.report}"
        " --generations {input.generations} {params.args} --scored {params.scored} --titles {params.titles}"
        " --out-md {output.md} --out-json {output.json} > {log} 2>&1"
