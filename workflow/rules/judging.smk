# The LLM judges: zero-shot labels per (task, judge, mode) on a sample of the test split, scored
# by rule `score` like any detector, and Table 8. One job per judge labels every task in every
# mode: its requests go out together, so a model served here starts once for them. Which judges get jobs is the plan's
# (judging.enabled); a job whose model has no key or api_base where it runs fails with one line
# naming the variable to set.


localrules:
    table8,


rule judge:
    input:
        unpack(judge_tests),
    output:
        predictions=[
            OUT.predictions(task=t, detector=judge_detector("{judge}", m))
            for t in PLAN.judge_tasks
            for m in PLAN.modes
        ],
        reports=[OUT.judge_report(t, "{judge}", m) for t in PLAN.judge_tasks for m in PLAN.modes],
    log:
        job=OUT.log("judge", "{judge}"),
        server=OUT.log("judge", "{judge}", suffix=".server.log"),
    benchmark:
        OUT.benchmark("judge", "{judge}")
    wildcard_constraints:
        judge=one_of(PLAN.judges),
    # the longest job after the task splits, beside the fits on one core: started first
    priority: NEURAL_FIRST
    conda:
        env("llm")
    threads: lambda w: llm_threads(MODELS[PLAN.judges[w.judge]["model"]])
    resources:
        **llm_res("judge", lambda w: MODELS[PLAN.judges[w.judge]["model"]]),
    params:
        guard=guard("judge"),
        model=lambda w: model_arg(PLAN.judges[w.judge]["model"]),
        runs=lambda w, input, output: judge_runs_arg(w.judge, input, output),
        prompts=lambda w: repo_path(config["judging"]["prompts"]),
        fraction=lambda w: config["judging"]["fraction"],
        sample=lambda w: judge_sample_args(w.judge),
        llm=lambda w: as_arg(config["llm"]),
        seed=SEED,
    shell:
        "{params.guard}python -m aicd.judge --model {params.model} --runs {params.runs} --prompts {params.prompts}"
        " --fraction {params.fraction} {params.sample} --seed {params.seed}"
        " --llm {params.llm} --server-log {log.server} > {log.job} 2>&1"


rule table8:
    input:
        scores=judge_scores(),
        reports=[DATA_OUT.judge_report(t, j, m) for t in PLAN.judge_tasks for j in PLAN.judges for m in PLAN.modes],
        inputs=INPUTS_JSON,
    output:
        tex=OUT.tab("table8", "tex"),
        md=OUT.tab("table8", "md"),
    log:
        OUT.log("table8", "table8"),
    benchmark:
        OUT.benchmark("table8", "table8")
    conda:
        env("core")
    resources:
        **res("table8"),
    params:
        layout=lambda w: as_arg(layouts.table8_layout(PLAN, endpoint_hint(MODELS))),
        tables_dir=lambda w, output: parent(output.tex),
    shell:
        "python -m aicd.report table8 --layout {params.layout} --scores {input.scores} --reports {input.reports}"
        " --inputs {input.inputs} --tables-dir {params.tables_dir} > {log} 2>&1"
