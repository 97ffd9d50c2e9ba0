# Sandboxed execution: every program of a source or a generator's table, compiled and run in
# long-lived containers on Docker or Podman (execution.engine). Which tables are executed is
# the plan's (execution.enabled); a job on a node without an engine fails with one line saying
# what to install or start.


localrules:
    execution_report,


rule sandbox_image:
    output:
        image=OUT.sandbox_image(),
    log:
        OUT.log("sandbox_image", "image"),
    benchmark:
        OUT.benchmark("sandbox_image", "image")
    conda:
        env("sandbox")
    threads: rule_threads("sandbox_image")
    resources:
        **res("sandbox_image"),
    params:
        guard=guard("sandbox_image"),
        base=lambda w: config["execution"]["base"],
        base_image=lambda w: config["execution"]["base_image"],
        engine=lambda w: config["execution"]["engine"],
        tag=lambda w: context_tag(CONTEXT, sandbox_base()),  # a changed Dockerfile or runner rebuilds
    shell:
        "{params.guard}python -m aicd.sandbox images --engine {params.engine} --base {params.base}"
        " --base-image {params.base_image} --out {output} > {log} 2>&1"


rule execute:
    input:
        table=execution_input,
        image=rules.sandbox_image.output.image,
    output:
        table=OUT.execution(),
        report=OUT.execution_report(),
    log:
        OUT.log("execute", "{name}"),
    benchmark:
        OUT.benchmark("execute", "{name}")
    wildcard_constraints:
        name=one_of(PLAN.executions),
    priority: 10  # a long job beside the rest, not the last one (as detect_folder)
    conda:
        env("sandbox")
    threads: lambda w: config["execution"]["workers"]
    resources:
        **res("execute"),
    params:
        guard=guard("execute"),
        spec=lambda w: as_arg(config_slice(config["execution"], ["workers", "recycle_after", "sample", "limits"])),
        engine=lambda w: config["execution"]["engine"],
    shell:
        "{params.guard}python -m aicd.sandbox execute --engine {params.engine} --input {input.table}"
        " --name {wildcards.name} --image {input.image} --spec {params.spec} --workers {threads}"
        " --out {output.table} --report {output.report} > {log} 2>&1"


rule execution_report:
    input:
        expand(OUT.execution_report(), name=PLAN.executions),
    output:
        OUT.execution_summary(),
    log:
        OUT.log("execution_report", "report"),
    benchmark:
        OUT.benchmark("execution_report", "report")
    conda:
        env("core")
    resources:
        **res("execution_report"),
    shell:
        "python -m aicd.report execution --reports {input} --out {output} > {log} 2>&1"
