# Table 4, confusion-matrix figures and results/report.md.


def report_layout():
    return {
        "tasks": [[t, config["tasks"][t]["title"]] for t in tasks()],
        "detectors": [
            [d, config["detectors"][d]["title"], bool(config["detectors"][d].get("dummy", False))]
            for d in detectors()
        ],
    }


rule report:
    input:
        scores=[f"{R}/scores/{t}/{d}.json" for t, d in plan()],
        sources=expand(
            f"{R}/sources/{{source}}.report.json",
            source=sorted({config["tasks"][t]["derive"]["source"] for t in tasks() if "derive" in config["tasks"][t]}),
        ),
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
        " --data-reports {input.sources} {input.tasks}"
        " --tables-dir {R}/tables --figures-dir {R}/figures --report {output.report} > {log} 2>&1"
