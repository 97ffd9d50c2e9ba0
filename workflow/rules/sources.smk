# Sources: one table per configured source, in the sample schema, with a report of every
# removed row and of every input read (content hashes: see aicd.fingerprint).

from aicd.sources import pinned as _pinned  # noqa: E402


def source_spec(name):
    """The source's config entry; a gathered source also gets the pinned entries (version,
    sha256) its `pinned:NAME` roots name, so changing a pin reruns it."""
    spec = config["sources"][name]
    if "gather" not in spec:
        return spec
    try:
        pins = _pinned.pins_for(spec["gather"].get("roots") or {})
    except AicdError as err:
        raise WorkflowError(str(err)) from None
    return {**spec, "gather": {**spec["gather"], "pinned": pins}}


def _check_pinned_inputs():
    """Stop before any job, in one line, when a pinned input is not in the cache."""
    used = set((config.get("dataset") or {}).get("sources", []))
    used |= {s["derive"]["source"] for s in config.get("tasks", {}).values() if "derive" in s}
    for name in sorted(used & set(config.get("sources", {}))):
        for pin, entry in source_spec(name).get("gather", {}).get("pinned", {}).items():
            path = _pinned.cache_dir() / entry["file"]
            if not path.is_file():
                raise WorkflowError(f"source {name}: pinned input {_pinned.describe(pin, entry)} is not in "
                                    f"{_pinned.cache_dir()}: run `{_pinned.FETCH_COMMAND}` (it downloads {entry['url']})")


_check_pinned_inputs()


rule source:
    output:
        table=f"{R}/sources/{{source}}.parquet",
        report=f"{R}/sources/{{source}}.report.json",
    params:
        spec=lambda w: as_arg(source_spec(w.source)),
        seed=seed(),
    log:
        f"{R}/logs/source/{{source}}.log",
    benchmark:
        f"{R}/benchmarks/source/{{source}}.tsv"
    conda:
        ENV
    shell:
        "{PYTHON} -m aicd.sources --name {wildcards.source} --spec {params.spec}"
        " --seed {params.seed} --out {output.table} --report {output.report} > {log} 2>&1"
