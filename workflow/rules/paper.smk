# Fast-DetectGPT (its own rule: binarised gold, a `criterion` column, and optionally a causal LM
# trained here as its scoring model), the paper's Tables 5-7, its figures and analyses, and
# results/paper_results.md, which the report embeds. Included after detectors.smk and report.smk.

FDG_KIND = "fast_detectgpt"


def fdg_detectors():
    return [d for d in detectors() if config["detectors"][d]["kind"] == FDG_KIND]


def lm_spec(detector):
    """The causal LM to train for a Fast-DetectGPT detector (params.train_lm), or None when
    params.model names one (Hub id or folder)."""
    return (config["detectors"][detector].get("params") or {}).get("train_lm")


def trained_detectors(task):
    """Detectors of `task` that learn from its train split (no dummies, no zero-shot)."""
    return [d for t, d in plan() if t == task and not config["detectors"][d].get("dummy")
            and config["detectors"][d]["kind"] != FDG_KIND]


def subset_table_detectors(task):
    """Detectors averaged in Tables 5-7: trained ones, plus Fast-DetectGPT on a two-class task
    (on more classes it is scored on binarised labels: another task)."""
    two_class = len(config["tasks"][task].get("labels", [])) == 2
    return [d for t, d in plan() if t == task and not config["detectors"][d].get("dummy")
            and (config["detectors"][d]["kind"] != FDG_KIND or two_class)]


def task_kind(task):
    return (config["tasks"][task].get("build") or {}).get("kind")


rule train_causal_lm:
    input:
        train=lambda w: f"{R}/tasks/{lm_spec(w.detector)['task']}/train.parquet",
        validation=lambda w: f"{R}/tasks/{lm_spec(w.detector)['task']}/validation.parquet",
    wildcard_constraints:
        detector=one_of([d for d in fdg_detectors() if lm_spec(d)]),
    output:
        directory(f"{R}/lm/{{detector}}"),
    params:
        settings=lambda w: as_arg({k: v for k, v in lm_spec(w.detector).items() if k != "task"}),
        seed=seed(),
    threads: lambda w: config["detectors"][w.detector].get("threads", 1)
    log:
        f"{R}/logs/train_causal_lm/{{detector}}.log",
    benchmark:
        f"{R}/benchmarks/train_causal_lm/{{detector}}.tsv"
    conda:
        ENCODER_ENV
    shell:
        "{PYTHON} -m aicd.lm --train {input.train} --validation {input.validation} --params {params.settings}"
        " --seed {params.seed} --threads {threads} --out {output} > {log} 2>&1"


rule detect_fast_detectgpt:
    input:
        tables=expand(f"{R}/tasks/{{{{task}}}}/{{split}}.parquet", split=SPLITS),
        lm=lambda w: [f"{R}/lm/{w.detector}"] if lm_spec(w.detector) else [],
    wildcard_constraints:
        detector=one_of(fdg_detectors()),
    output:
        predictions=f"{R}/predictions/{{task}}/{{detector}}.parquet",
        model=f"{R}/models/{{task}}/{{detector}}.json",
    params:
        spec=lambda w: as_arg(config_slice(config["detectors"][w.detector], ["kind", "params"])),
        lm=lambda w, input: f"--lm-dir {input.lm}" if input.lm else "",
        seed=seed(),
    threads: lambda w: config["detectors"][w.detector].get("threads", 1)
    resources:
        mem_mb=detector_resource("mem_mb", 8000),
        runtime=detector_resource("runtime", 60),
        gpu=detector_resource("gpu", 0),
    log:
        f"{R}/logs/detect/{{task}}/{{detector}}.log",
    benchmark:
        f"{R}/benchmarks/detect/{{task}}/{{detector}}.tsv"
    conda:
        ENCODER_ENV
    shell:
        "{PYTHON} -m aicd.detectors.run_fast_detectgpt --spec {params.spec} --tasks-dir {R}/tasks/{wildcards.task}"
        " {params.lm} --seed {params.seed} --threads {threads}"
        " --out {output.predictions} --model {output.model} > {log} 2>&1"


def subset_tables_layout():
    tables = {}
    for number, kind in ((5, "binary"), (6, "family"), (7, "fine_grained")):
        task = next((t for t in tasks() if task_kind(t) == kind), None)
        tables[str(number)] = {"task": task, "labels": config["tasks"][task].get("labels", []) if task else [],
                               "detectors": subset_table_detectors(task) if task else []}
    return {"tables": tables, "titles": {d: config["detectors"][d]["title"] for d in detectors()}}


rule subset_tables:
    input:
        scores=[f"{R}/scores/{t}/{d}.json" for t, d in plan()],
        inputs=rules.inputs.output[0],
    output:
        tables=expand(f"{R}/tables/table{{n}}.{{ext}}", n=[5, 6, 7], ext=["tex", "md"]),
        summary=f"{R}/tables/subset_tables.json",
    params:
        layout=lambda w: as_arg(subset_tables_layout()),
    log:
        f"{R}/logs/subset_tables/subset_tables.log",
    benchmark:
        f"{R}/benchmarks/subset_tables/subset_tables.tsv"
    conda:
        ENV
    shell:
        "{PYTHON} -m aicd.report.subset_tables --layout {params.layout} --scores {input.scores}"
        " --inputs {input.inputs} --tables-dir {R}/tables > {log} 2>&1"


def figures_layout():
    return {"tasks": [[t, config["tasks"][t]["title"], config["tasks"][t].get("labels", [])] for t in tasks()],
            "detectors": [[d, config["detectors"][d]["title"], bool(config["detectors"][d].get("dummy", False))]
                          for d in detectors()]}


rule paper_figures:
    input:
        scores=[f"{R}/scores/{t}/{d}.json" for t, d in plan()],
        measurements=lambda w: dataset_inputs() if built_tasks() else [],
    output:
        index=f"{R}/figures/paper_figures.json",
    params:
        layout=lambda w: as_arg(figures_layout()),
        measurements=lambda w, input: f"--measurements {' '.join(input.measurements)}" if input.measurements else "",
    log:
        f"{R}/logs/paper_figures/paper_figures.log",
    benchmark:
        f"{R}/benchmarks/paper_figures/paper_figures.tsv"
    conda:
        ENV
    shell:
        "{PYTHON} -m aicd.report.paper_figures --layout {params.layout} --scores {input.scores}"
        " {params.measurements} --figures-dir {R}/figures --out {output.index} > {log} 2>&1"


def _on_task(task, kind, features):
    return [d for d in trained_detectors(task) if config["detectors"][d]["kind"] == kind
            and config["detectors"][d].get("features") in features]


def analyses_inputs(w):
    inputs = {"test": f"{R}/tasks/{w.task}/test.parquet",
              "predictions": [f"{R}/predictions/{w.task}/{d}.parquet" for d in trained_detectors(w.task)]}
    svm = _on_task(w.task, "linear_svm", ["tfidf"])
    if svm:
        inputs["svm"] = [f"{R}/models/{w.task}/{svm[0]}.pkl", f"{R}/features/{w.task}/tfidf/featurizer.pkl"]
    shap = _on_task(w.task, "catboost", ["ast", "ast_tfidf"])
    inputs["shap"] = [p for d in shap for p in (f"{R}/models/{w.task}/{d}.pkl",
                      f"{R}/features/{w.task}/{config['detectors'][d]['features']}/features.npz")]
    return inputs


def analyses_args(w, input):
    args = []
    if "svm" in input.keys():
        args.append(f"--svm {input.svm[0]} {input.svm[1]}")
    shap = list(input.shap)
    for i in range(0, len(shap), 2):
        args.append(f"--shap {os.path.splitext(os.path.basename(shap[i]))[0]} {shap[i]} {shap[i + 1]}")
    if input.predictions:
        args.append(f"--predictions {' '.join(input.predictions)}")
    return " ".join(args)


rule analyses:
    input:
        unpack(analyses_inputs),
    output:
        summary=f"{R}/analyses/{{task}}/summary.json",
    params:
        args=analyses_args,
        title=lambda w: shlex.quote(config["tasks"][w.task]["title"]),
        titles=lambda w: as_arg({d: config["detectors"][d]["title"] for d in detectors()}),
        seed=seed(),
    log:
        f"{R}/logs/analyses/{{task}}.log",
    benchmark:
        f"{R}/benchmarks/analyses/{{task}}.tsv"
    conda:
        ENV
    shell:
        "{PYTHON} -m aicd.report.analyses --task {wildcards.task} --title {params.title} {params.args}"
        " --test {input.test} --titles {params.titles} --seed {params.seed}"
        " --out-dir {R}/analyses/{wildcards.task} --figures-dir {R}/figures > {log} 2>&1"


rule paper_section:
    input:
        scores=[f"{R}/scores/{t}/{d}.json" for t, d in plan()],
        tables=rules.subset_tables.output.tables,
        figures=rules.paper_figures.output.index,
        analyses=expand(f"{R}/analyses/{{task}}/summary.json", task=tasks()),
        fdg=[f"{R}/models/{t}/{d}.json" for t, d in plan() if d in fdg_detectors()],
    output:
        f"{R}/paper_results.md",
    params:
        layout=lambda w: as_arg({"detectors": {d: config_slice(config["detectors"][d], ["kind", "title", "features", "params"])
                                               for d in detectors()},
                                 "tasks": {t: config["tasks"][t]["title"] for t in tasks()}}),
        fdg=lambda w, input: f"--fast-detectgpt {' '.join(input.fdg)}" if input.fdg else "",
    log:
        f"{R}/logs/paper_section/paper_section.log",
    benchmark:
        f"{R}/benchmarks/paper_section/paper_section.tsv"
    conda:
        ENV
    shell:
        "{PYTHON} -m aicd.report.paper_section --layout {params.layout} --scores {input.scores}"
        " --tables-dir {R}/tables --figures-index {input.figures} --analyses {input.analyses}"
        " {params.fdg} --out {output} > {log} 2>&1"


def paper_targets():
    return [f"{R}/paper_results.md"]
