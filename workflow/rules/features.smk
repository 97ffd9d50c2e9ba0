# Feature sets per (task, feature set): fitted on train once, reused by every detector.


rule features:
    input:
        unpack(feature_inputs),
    output:
        features=OUT.features(),
        model=OUT.featurizer(),
        report=OUT.features_report(),
    log:
        OUT.log("features", "{task}", "{featureset}"),
    benchmark:
        OUT.benchmark("features", "{task}", "{featureset}")
    # before the detectors that are ready; a neural model's set first of all, beside the judge
    priority: neural_features_first
    conda:
        feature_env
    # all from the plan (aicd.plan.FeaturePlan), as the list of GPU jobs has them
    threads: lambda w: feature(w).threads
    resources:
        **feature_res(),
    params:
        guard=guard("features"),
        spec=feature_spec,
        args=feature_args,
        seed=SEED,
        cache=OUT.features_cache(),
    shell:
        "{params.guard}python -m aicd.features --spec {params.spec} {params.args} --seed {params.seed} --threads {threads}"
        " --cache-dir {params.cache}"
        " --out {output.features} --model {output.model} --report {output.report} > {log} 2>&1"
