# Feature sets per (task, feature set): fitted on train once, reused by every detector.


def feature_inputs(w):
    spec = config["features"][w.featureset]
    if spec["kind"] == "concat":
        return [f"{R}/features/{w.task}/{part}/features.npz" for part in spec["parts"]]
    return expand(f"{R}/tasks/{w.task}/{{split}}.parquet", split=SPLITS)


def feature_args(w, input):
    if config["features"][w.featureset]["kind"] == "concat":
        return "--parts " + " ".join(input)
    return f"--tasks-dir {R}/tasks/{w.task}"


rule features:
    input:
        feature_inputs,
    output:
        features=f"{R}/features/{{task}}/{{featureset}}/features.npz",
        model=f"{R}/features/{{task}}/{{featureset}}/featurizer.pkl",
        report=f"{R}/features/{{task}}/{{featureset}}/report.json",
    params:
        spec=lambda w: as_arg(config["features"][w.featureset]),
        args=feature_args,
        seed=seed(),
    log:
        f"{R}/logs/features/{{task}}/{{featureset}}.log",
    benchmark:
        f"{R}/benchmarks/features/{{task}}/{{featureset}}.tsv"
    conda:
        ENV
    shell:
        "{PYTHON} -m aicd.features --spec {params.spec} {params.args} --seed {params.seed}"
        " --out {output.features} --model {output.model} --report {output.report} > {log} 2>&1"
