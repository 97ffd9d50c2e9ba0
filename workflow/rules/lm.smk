# The causal LM a detector scores with when it asks for one (params.train_lm; the workflow
# tests' slice does): trained on a task's human code before the detector's fit.


rule train_causal_lm:
    input:
        train=lambda w: DATA_OUT.split(PLAN.lms[w.detector]["task"], "train"),
        validation=lambda w: DATA_OUT.split(PLAN.lms[w.detector]["task"], "validation"),
    output:
        directory(OUT.lm()),
    log:
        OUT.log("train_causal_lm", "{detector}"),
    benchmark:
        OUT.benchmark("train_causal_lm", "{detector}")
    wildcard_constraints:
        detector=one_of(PLAN.lms),
    priority: 10  # its detector's fit waits for it: start it first (as detect_folder)
    conda:
        env("neural")
    threads: detector_threads
    resources:
        **detector_res(),
    params:
        guard=guard("train_causal_lm"),
        settings=lambda w: as_arg(lm_spec(w)),
        seed=SEED,
    shell:
        "{params.guard}python -m aicd.lm --train {input.train} --validation {input.validation} --params {params.settings}"
        " --seed {params.seed} --threads {threads} --out {output} > {log} 2>&1"
