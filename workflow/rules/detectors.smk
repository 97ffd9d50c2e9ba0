# One job per (task, detector): fit on train, predict test. Two rules, because the fitted
# detector is stored two ways: a pickle file (dummy, classical) or a save_pretrained folder
# (the fine-tuned encoders, `kind: encoder`, which also declare GPU resources).


rule detect:
    input:
        unpack(detector_inputs),
    output:
        predictions=f"{R}/predictions/{{task}}/{{detector}}.parquet",
        model=f"{R}/models/{{task}}/{{detector}}.pkl",
    log:
        f"{R}/logs/detect/{{task}}/{{detector}}.log",
    benchmark:
        f"{R}/benchmarks/detect/{{task}}/{{detector}}.tsv"
    wildcard_constraints:
        detector=none_of(not_file_detectors()),
    conda:
        env("core")
    threads: detector_threads
    resources:
        mem_mb=detector_mem_mb(4000),
        runtime=120,
    params:
        spec=lambda w: as_arg(config_slice(config["detectors"][w.detector], ["kind", "features", "params"])),
        features=lambda w, input: (
            f"--features {input.features} --featurizer {input.featurizer}" if "features" in input.keys() else ""
        ),
        tasks_dir=lambda w, input: parent(input.tables[0]),
        seed=seed(),
    shell:
        GUARD + "python -m aicd.detectors --spec {params.spec} --task {wildcards.task} --tasks-dir {params.tasks_dir}"
        " {params.features} --seed {params.seed} --threads {threads}"
        " --out {output.predictions} --model {output.model} > {log} 2>&1"


# Fine-tuned encoders. Checkpoints live in results/checkpoints/{task}/{detector}/, outside the
# rule's outputs, so a killed or pre-empted job (snakemake deletes an incomplete job's outputs)
# resumes from its last checkpoint when it runs again; they are removed after a successful fit.
# Tokenised splits are cached in results/cache/tokens/{task}/, shared by encoders with the same
# tokenizer. Resources come from the detector's `resources:` entry (gpu: 1 on the paper's six);
# the SLURM profile turns `gpu` into --gpus and can send the rule to a GPU partition.
rule detect_encoder:
    input:
        tables=expand(f"{R}/tasks/{{{{task}}}}/{{split}}.parquet", split=SPLITS),
    output:
        predictions=f"{R}/predictions/{{task}}/{{detector}}.parquet",
        model=directory(f"{R}/models/{{task}}/{{detector}}"),
    log:
        f"{R}/logs/detect/{{task}}/{{detector}}.log",
    benchmark:
        f"{R}/benchmarks/detect/{{task}}/{{detector}}.tsv"
    wildcard_constraints:
        detector=one_of(folder_detectors()),
    conda:
        env("neural")
    threads: detector_threads
    resources:
        mem_mb=detector_mem_mb(8000),
        runtime=detector_resource("runtime", 60),
        gpu=detector_resource("gpu", 0),
    params:
        spec=lambda w: as_arg(config_slice(config["detectors"][w.detector], ["kind", "params"])),
        seed=seed(),
        tasks_dir=lambda w, input: parent(input.tables[0]),
        work=f"{R}/checkpoints/{{task}}/{{detector}}",
        cache=f"{R}/cache/tokens/{{task}}",
    shell:
        GUARD + "python -m aicd.detectors --spec {params.spec} --task {wildcards.task} --tasks-dir {params.tasks_dir}"
        " --seed {params.seed} --threads {threads} --work-dir {params.work} --cache-dir {params.cache}"
        " --out {output.predictions} --model {output.model} > {log} 2>&1"
