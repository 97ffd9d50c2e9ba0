# Table 4, confusion-matrix figures and results/report.md.


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


rule report:
    input:
        scores=[f"{R}/scores/{t}/{d}.json" for t, d in plan()],
        sources=expand(f"{R}/sources/{{source}}.report.json", source=report_sources()),
        dataset=lambda w: [f"{R}/dataset/filter_report.json", f"{R}/dataset/dedup_report.json"] if built_tasks() else [],
        tasks=expand(f"{R}/tasks/{{task}}/report.json", task=tasks()),
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
        "{PYTHON} -m aicd.report --layout {params.layout} --scores {input.scores}"
        " --data-reports {input.sources} {input.dataset} {input.tasks}"
        " --tables-dir {R}/tables --figures-dir {R}/figures --report {output.report} > {log} 2>&1"
