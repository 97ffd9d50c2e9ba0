# The LLM stages: generation per registry model, zero-shot judges per (task, judge, mode),
# and their aggregates (generation report, Table 8). A model without an endpoint (no api_base,
# no key in the environment) gets no jobs; the rest of the DAG runs without it.

from aicd.generate.protocols import NEEDS_INSTRUCTION
from aicd.generate.registry import endpoint_hint, enabled_models, has_endpoint, load_registry


def repo_path(path):
    """Config paths to shipped files (registry, prompts) are relative to the repository."""
    return path if os.path.isabs(path) else os.path.join(workflow.basedir, path)


try:
    REGISTRY = load_registry(repo_path(config.get("registry", "config/models.yaml")),
                             os.path.join(workflow.basedir, "workflow", "schemas", "models.schema.yaml"))
except AicdError as err:
    raise WorkflowError(str(err)) from None

LLM = config.get("llm", {})
GEN = config.get("generation")
JUDGING = config.get("judging") or {}
MODES = JUDGING.get("modes", ["zs", "cot"])

for _name in [GEN.get("instructor")] if GEN and GEN.get("instructor") else []:
    if _name not in REGISTRY:
        raise WorkflowError(f"config.generation.instructor: '{_name}' is not in the model registry")
for _j, _spec in JUDGING.get("judges", {}).items():
    if _spec["model"] not in REGISTRY:
        raise WorkflowError(f"config.judging.judges.{_j}.model: '{_spec['model']}' is not in the model registry")

try:
    GENERATORS = enabled_models(REGISTRY, GEN.get("models", "all")) if GEN else []
except AicdError as err:
    raise WorkflowError(f"config.generation.models: {err}") from None
INSTRUCTOR_OK = bool(GEN and GEN.get("instructor") and has_endpoint(REGISTRY[GEN["instructor"]]))


def protocol_sources(protocol, spec):
    """The sources a protocol prompts from: its own `sources`, else generation.source."""
    names = spec.get("sources") or ([GEN["source"]] if GEN.get("source") else [])
    if not names:
        raise WorkflowError(f"config.generation.protocols.{protocol}: name its sources "
                            "(sources: [...]) or set generation.source")
    for name in names:
        if name not in config.get("sources", {}):
            raise WorkflowError(f"config.generation.protocols.{protocol}: no source named '{name}' "
                                f"(sources: {', '.join(config.get('sources', {})) or 'none'})")
    return names


# Every protocol with its sources spelled out, so a job's params say exactly what it reads.
GEN_PROTOCOLS = {
    p: {**spec, "sources": protocol_sources(p, spec)} for p, spec in (GEN or {}).get("protocols", {}).items()
    if p not in NEEDS_INSTRUCTION or INSTRUCTOR_OK
}


def generation_sources(protocols):
    """--source NAME=PATH arguments and input paths for the sources the protocols read."""
    names = sorted({s for spec in protocols.values() for s in spec["sources"]})
    return {name: f"{R}/sources/{name}.parquet" for name in names}


def source_args(paths):
    return " ".join(f"--source {shlex.quote(f'{name}={path}')}" for name, path in paths.items())


INSTRUCTION_PROTOCOLS = {p: s for p, s in GEN_PROTOCOLS.items() if p in NEEDS_INSTRUCTION}
JUDGES = {j: s for j, s in JUDGING.get("judges", {}).items() if has_endpoint(REGISTRY[s["model"]])}
JUDGE_TASKS = tasks() if JUDGING.get("tasks", "all") == "all" else JUDGING["tasks"]

_off = []
if GEN and not GENERATORS:
    _off.append("generation")
if GEN and GENERATORS and len(GEN_PROTOCOLS) < len(GEN.get("protocols", {})):
    _off.append("the instruction-based protocols (the instructor has no endpoint)")
if JUDGING.get("judges") and not JUDGES:
    _off.append("judging (Table 8 will say 'not run')")
if _off:
    print(f"LLM stages: no endpoint, so {' and '.join(_off)} left out; to enable, {endpoint_hint(REGISTRY)}.",
          file=sys.stderr)

wildcard_constraints:
    model=r"[A-Za-z0-9._-]+",
    judge=r"[A-Za-z0-9-]+",
    mode=r"zs|cot",


def model_arg(name):
    return as_arg(REGISTRY[name])


rule instructions:
    input:
        sources=lambda w: list(generation_sources(INSTRUCTION_PROTOCOLS).values()),
    output:
        f"{R}/instructions/instructions.parquet",
    params:
        model=lambda w: model_arg(GEN["instructor"]),
        sources=lambda w: source_args(generation_sources(INSTRUCTION_PROTOCOLS)),
        protocols=lambda w: as_arg(INSTRUCTION_PROTOCOLS),
        prompts=lambda w: repo_path(GEN.get("prompts", "config/prompts/generation.v1.yaml")),
        llm=lambda w: as_arg(LLM),
        seed=seed(),
    log:
        f"{R}/logs/instructions/instructions.log",
    benchmark:
        f"{R}/benchmarks/instructions/instructions.tsv"
    conda:
        ENV
    shell:
        "{PYTHON} -m aicd.generate instructions --model {params.model} {params.sources}"
        " --prompts {params.prompts} --protocols {params.protocols} --llm {params.llm} --seed {params.seed}"
        " --out {output} > {log} 2>&1"


def generate_inputs(w):
    inputs = {f"source_{name}": path for name, path in generation_sources(GEN_PROTOCOLS).items()}
    if any(p in NEEDS_INSTRUCTION for p in GEN_PROTOCOLS):
        inputs["instructions"] = rules.instructions.output[0]
    return inputs


rule generate:
    input:
        unpack(generate_inputs),
    output:
        table=f"{R}/generations/{{model}}.parquet",
        report=f"{R}/generations/{{model}}.report.json",
    params:
        model=lambda w: model_arg(w.model),
        sources=lambda w: source_args(generation_sources(GEN_PROTOCOLS)),
        protocols=lambda w: as_arg(GEN_PROTOCOLS),
        prompts=lambda w: repo_path(GEN.get("prompts", "config/prompts/generation.v1.yaml")),
        instructions=lambda w, input: f"--instructions {input.instructions}" if "instructions" in input.keys() else "",
        llm=lambda w: as_arg(LLM),
        seed=seed(),
    log:
        f"{R}/logs/generate/{{model}}.log",
    benchmark:
        f"{R}/benchmarks/generate/{{model}}.tsv"
    conda:
        ENV
    shell:
        "{PYTHON} -m aicd.generate generate --model {params.model} {params.sources}"
        " --prompts {params.prompts} --protocols {params.protocols} {params.instructions}"
        " --llm {params.llm} --seed {params.seed} --out {output.table} --report {output.report} > {log} 2>&1"


rule generation_report:
    input:
        expand(f"{R}/generations/{{model}}.report.json", model=GENERATORS),
    output:
        json=f"{R}/generations/report.json",
        md=f"{R}/generations/report.md",
    params:
        disabled=lambda w: as_arg({"models": [m for m in REGISTRY if m not in GENERATORS], "hint": endpoint_hint(REGISTRY)}),
    log:
        f"{R}/logs/generation_report/report.log",
    conda:
        ENV
    shell:
        "{PYTHON} -m aicd.report.llm_tables generation --reports {input} --disabled {params.disabled}"
        " --out-json {output.json} --out-md {output.md} > {log} 2>&1"


rule judge:
    input:
        test=f"{R}/tasks/{{task}}/test.parquet",
    output:
        predictions=f"{R}/predictions/{{task}}/judge_{{judge}}_{{mode}}.parquet",
        report=f"{R}/judges/{{task}}/{{judge}}_{{mode}}.report.json",
    params:
        model=lambda w: model_arg(JUDGING["judges"][w.judge]["model"]),
        labels=lambda w: " ".join(shlex.quote(c) for c in config["tasks"][w.task]["labels"]),
        target=lambda w: (config["tasks"][w.task].get("derive") or config["tasks"][w.task]).get("target", "label"),
        prompts=lambda w: repo_path(JUDGING.get("prompts", "config/prompts/judge.v1.yaml")),
        fraction=JUDGING.get("fraction", 0.05),
        llm=lambda w: as_arg(LLM),
        seed=seed(),
    log:
        f"{R}/logs/judge/{{task}}/{{judge}}_{{mode}}.log",
    benchmark:
        f"{R}/benchmarks/judge/{{task}}/{{judge}}_{{mode}}.tsv"
    conda:
        ENV
    shell:
        "{PYTHON} -m aicd.judge --model {params.model} --mode {wildcards.mode} --test {input.test}"
        " --labels {params.labels} --target {params.target} --prompts {params.prompts}"
        " --fraction {params.fraction} --seed {params.seed} --llm {params.llm}"
        " --out {output.predictions} --report {output.report} > {log} 2>&1"


rule table8:
    input:
        scores=[f"{R}/scores/{t}/judge_{j}_{m}.json" for t in JUDGE_TASKS for j in JUDGES for m in MODES],
        inputs=rules.inputs.output[0],
    output:
        tex=f"{R}/tables/table8.tex",
        md=f"{R}/tables/table8.md",
    params:
        layout=lambda w: as_arg({
            "tasks": [[t, config["tasks"][t]["title"]] for t in JUDGE_TASKS],
            "judges": [[j, s["title"]] for j, s in JUDGING.get("judges", {}).items()],
            "modes": MODES,
            "hint": endpoint_hint(REGISTRY),
        }),
    log:
        f"{R}/logs/table8/table8.log",
    conda:
        ENV
    shell:
        "{PYTHON} -m aicd.report.llm_tables table8 --layout {params.layout} --scores {input.scores}"
        " --inputs {input.inputs} --tables-dir {R}/tables > {log} 2>&1"


def llm_targets():
    targets = [rules.table8.output.tex] if JUDGING.get("judges") else []
    # Generation feeds the full build; a release evaluation (the default) does not need it.
    if GEN and (built_tasks() or not any("release" in config["tasks"][t] for t in tasks())):
        targets.append(rules.generation_report.output.json)
    return targets
