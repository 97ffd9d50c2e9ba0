# The input fingerprint (results/inputs.json), Table 4, confusion-matrix figures and
# results/report.md.

from aicd.fingerprint import code_version as _code_version  # noqa: E402

# git describe of this checkout: a new commit rewrites inputs.json and the tables that name it.
CODE_VERSION = _code_version(workflow.basedir)


def report_layout():
    return {
        "tasks": [[t, config["tasks"][t]["title"]] for t in tasks()],
        "detectors": [
            [d, config["detectors"][d]["title"], bool(config["detectors"][d].get("dummy", False))]
            for d in detectors()
        ],
        # label maps the release does not publish, with the evidence they rest on
        "provisional": {t: config["tasks"][t]["label_map_provisional"] for t in tasks()
                        if "label_map_provisional" in config["tasks"][t]},
    }


def report_sources():
    """Sources whose reports the summary shows: those tasks derive from, and the pool's."""
    names = {config["tasks"][t]["derive"]["source"] for t in tasks() if mode_of(t) == "derive"}
    if built_tasks():
        names |= set(config["dataset"]["sources"])
    return sorted(names)


def generation_tables(w):
    """Generator tables the pool reads: inputs of the build, fingerprinted like the sources."""
    dataset = config.get("dataset") or {}
    if built_tasks() and dataset.get("generations") and GEN:
        return [f"{R}/generations/{m}.parquet" for m in GENERATORS]
    return []


rule inputs:
    input:
        sources=expand(f"{R}/sources/{{source}}.report.json", source=report_sources()),
        generations=generation_tables,
    output:
        f"{R}/inputs.json",
    params:
        release=lambda w: as_arg({t: config["tasks"][t]["release"] for t in tasks() if mode_of(t) == "release"}),
        code=shlex.quote(CODE_VERSION),
    log:
        f"{R}/logs/inputs/inputs.log",
    benchmark:
        f"{R}/benchmarks/inputs/inputs.tsv"
    conda:
        ENV
    shell:
        "{PYTHON} -m aicd.fingerprint --sources {input.sources} --generations {input.generations}"
        " --release {params.release} --code {params.code} --out {output} > {log} 2>&1"


rule report:
    input:
        inputs=rules.inputs.output,
        scores=[f"{R}/scores/{t}/{d}.json" for t, d in plan()],
        sources=expand(f"{R}/sources/{{source}}.report.json", source=report_sources()),
        dataset=lambda w: [f"{R}/dataset/filter_report.json", f"{R}/dataset/dedup_report.json"] if built_tasks() else [],
        tasks=expand(f"{R}/tasks/{{task}}/report.json", task=tasks()),
        paper=f"{R}/paper_results.md",
    output:
        tex=f"{R}/tables/table4.tex",
        md=f"{R}/tables/table4.md",
        figures=expand(f"{R}/figures/confusion_{{task}}.{{ext}}", task=tasks(), ext=["pdf", "png"]),
        report=f"{R}/report.md",
    params:
        layout=lambda w: as_arg(report_layout()),
    log:
        f"{R}/logs/report/report.log",
    benchmark:
        f"{R}/benchmarks/report/report.tsv"
    conda:
        ENV
    shell:
        "{PYTHON} -m aicd.report --layout {params.layout} --scores {input.scores} --inputs {input.inputs}"
        " --data-reports {input.sources} {input.dataset} {input.tasks}"
        " --tables-dir {R}/tables --figures-dir {R}/figures --report {output.report}"
        " --paper-section {input.paper} > {log} 2>&1"
