# Sandboxed execution: every program of a source or a generator's table, compiled and run in
# long-lived Docker containers. Without a Docker daemon the stage is left out with one line.

from aicd.sandbox.images import CONTEXT, LOCAL_BASE, context_tag
from aicd.sandbox.pool import docker_available

EXEC = config.get("execution")
DOCKER_OK = bool(EXEC) and docker_available()
EXEC_NAMES = []
if EXEC and DOCKER_OK:
    EXEC_NAMES = list(EXEC.get("sources", [])) + (GENERATORS if EXEC.get("generations", True) else [])
elif EXEC:
    print("Sandbox: no Docker daemon answers, so execution is left out; to enable, install docker.io "
          "and start dockerd (see README, Sandbox).", file=sys.stderr)


def sandbox_base():
    return LOCAL_BASE if EXEC.get("base", "debootstrap") == "debootstrap" else EXEC.get("base_image", "debian:bookworm-slim")


rule sandbox_image:
    output:
        f"{R}/sandbox/image.txt",
    params:
        base=lambda w: EXEC.get("base", "debootstrap"),
        base_image=lambda w: EXEC.get("base_image", "debian:bookworm-slim"),
        tag=lambda w: context_tag(CONTEXT, sandbox_base()),  # a changed Dockerfile or runner rebuilds
    log:
        f"{R}/logs/sandbox_image/image.log",
    conda:
        ENV
    shell:
        "{PYTHON} -m aicd.sandbox images --base {params.base} --base-image {params.base_image}"
        " --out {output} > {log} 2>&1"


def execution_input(w):
    if w.name in GENERATORS:
        return f"{R}/generations/{w.name}.parquet"
    return f"{R}/sources/{w.name}.parquet"


rule execute:
    input:
        table=execution_input,
        image=rules.sandbox_image.output[0],
    output:
        table=f"{R}/execution/{{name}}.parquet",
        report=f"{R}/execution/{{name}}.report.json",
    wildcard_constraints:
        name="|".join(re.escape(n) for n in EXEC_NAMES) or "^$",
    params:
        spec=lambda w: as_arg(config_slice(EXEC, ["workers", "recycle_after", "sample", "limits"])),
    threads: lambda w: EXEC.get("workers", 1)
    resources:
        docker=1,
    log:
        f"{R}/logs/execute/{{name}}.log",
    benchmark:
        f"{R}/benchmarks/execute/{{name}}.tsv"
    conda:
        ENV
    shell:
        "{PYTHON} -m aicd.sandbox execute --input {input.table} --name {wildcards.name} --image {input.image}"
        " --spec {params.spec} --out {output.table} --report {output.report} > {log} 2>&1"


rule execution_report:
    input:
        expand(f"{R}/execution/{{name}}.report.json", name=EXEC_NAMES),
    output:
        f"{R}/execution/report.md",
    log:
        f"{R}/logs/execution_report/report.log",
    conda:
        ENV
    shell:
        "{PYTHON} -m aicd.report.execution --reports {input} --out {output} > {log} 2>&1"


def execution_targets():
    return [rules.execution_report.output[0]] if EXEC_NAMES else []
