# One job per (task, detector): fit on train, predict test. Two rules, because the fitted
# detector is stored two ways: a pickle file (dummy, classical) or a save_pretrained folder
# (the fine-tuned encoders, `kind: encoder`, which also declare GPU resources).

ENCODER_ENV = os.path.join(workflow.basedir, "envs", "encoders.yaml")
FOLDER_KINDS = {"encoder"}  # detector kinds stored as a folder (aicd.detectors: model_suffix "")
OWN_RULE_KINDS = {"fast_detectgpt"}  # detector kinds with their own rule (workflow/rules/paper.smk)


def folder_detectors():
    return [d for d in detectors() if config["detectors"][d]["kind"] in FOLDER_KINDS]


def file_detectors():
    return [d for d in detectors() if config["detectors"][d]["kind"] not in FOLDER_KINDS | OWN_RULE_KINDS]


def one_of(names):
    # an empty list must match nothing (not the empty string)
    return "|".join(re.escape(n) for n in names) or "(?!)"


def detector_inputs(w):
    inputs = {"tables": expand(f"{R}/tasks/{w.task}/{{split}}.parquet", split=SPLITS)}
    featureset = config["detectors"][w.detector].get("features")
    if featureset:
        inputs["features"] = f"{R}/features/{w.task}/{featureset}/features.npz"
    return inputs


def detector_resource(name, default):
    """A per-detector resource from its config entry (`resources:`), else a default; nothing is
    read from the machine that submits the job."""
    return lambda w: config["detectors"][w.detector].get("resources", {}).get(name, default)


rule detect:
    input:
        unpack(detector_inputs),
    wildcard_constraints:
        detector=one_of(file_detectors()),
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


# Fine-tuned encoders. Checkpoints live in results/checkpoints/{task}/{detector}/, outside the
# rule's outputs, so a killed or pre-empted job (snakemake deletes an incomplete job's outputs)
# resumes from its last checkpoint when it runs again; they are removed after a successful fit.
# Tokenised splits are cached in results/cache/tokens/{task}/, shared by encoders with the same
# tokenizer. Resources come from the detector's `resources:` entry (gpu: 1 on the paper's six);
# a SLURM profile maps them onto a GPU partition.
rule detect_encoder:
    input:
        tables=expand(f"{R}/tasks/{{{{task}}}}/{{split}}.parquet", split=SPLITS),
    wildcard_constraints:
        detector=one_of(folder_detectors()),
    output:
        predictions=f"{R}/predictions/{{task}}/{{detector}}.parquet",
        model=directory(f"{R}/models/{{task}}/{{detector}}"),
    params:
        spec=lambda w: as_arg(config_slice(config["detectors"][w.detector], ["kind", "params"])),
        seed=seed(),
        work=f"{R}/checkpoints/{{task}}/{{detector}}",
        cache=f"{R}/cache/tokens/{{task}}",
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
        "{PYTHON} -m aicd.detectors --spec {params.spec} --tasks-dir {R}/tasks/{wildcards.task}"
        " --seed {params.seed} --threads {threads} --work-dir {params.work} --cache-dir {params.cache}"
        " --out {output.predictions} --model {output.model} > {log} 2>&1"
