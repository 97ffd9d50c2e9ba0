# One job per (task, detector): fit on train, predict test.


def detector_inputs(w):
    inputs = {"tables": expand(f"{R}/tasks/{w.task}/{{split}}.parquet", split=SPLITS)}
    featureset = config["detectors"][w.detector].get("features")
    if featureset:
        inputs["features"] = f"{R}/features/{w.task}/{featureset}/features.npz"
    return inputs


rule detect:
    input:
        unpack(detector_inputs),
    wildcard_constraints:
        detector="|".join(re.escape(d) for d in detectors()),
    output:
        predictions=f"{R}/predictions/{{task}}/{{detector}}.parquet",
        model=f"{R}/models/{{task}}/{{detector}}.pkl",
    params:
        spec=lambda w: as_arg(config_slice(config["detectors"][w.detector], ["kind", "features", "params"])),
        features=lambda w, input: f"--features {input.features}" if "features" in input.keys() else "",
        seed=seed(),
    threads: lambda w: config["detectors"][w.detector].get("threads", 1)
    log:
        f"{R}/logs/detect/{{task}}/{{detector}}.log",
    benchmark:
        f"{R}/benchmarks/detect/{{task}}/{{detector}}.tsv"
    conda:
        ENV
    shell:
        "{PYTHON} -m aicd.detectors --spec {params.spec} --tasks-dir {R}/tasks/{wildcards.task}"
        " {params.features} --seed {params.seed} --threads {threads}"
        " --out {output.predictions} --model {output.model} > {log} 2>&1"
