"""The LLM and sandbox stages' plan: who writes code under which protocols (GenerationPlan), which
judges run, which tables the sandbox executes, and the one line per stage that says what is left
out and why. Pure: it reads the recorded resolution of the machine (aicd.resolve), never probes."""

from __future__ import annotations

from dataclasses import dataclass

from ..common.defaults import schema_default
from ..config import stage_on
from ..generate.protocols import NEEDS_INSTRUCTION
from ..outputs import Outputs


@dataclass(frozen=True)
class GenerationPlan:
    """Which models write code and under which protocols, decided once (`generation_plan`)."""

    models: tuple           # every model with generate jobs: the pool's, then those only a test set names
    pool: tuple             # those whose code enters the pool
    protocols: dict         # protocol -> its spec, sources spelled out (none that needs a missing instructor)
    instructor: str | None  # the model that writes the instructions, where it has an endpoint
    planned: bool           # the stage is planned (its report, even where no model has an endpoint)
    off: tuple              # what is left out for want of an endpoint (the LLM stages' note)

    @property
    def named(self) -> tuple:
        """Models generated only for the test sets that name them."""
        return tuple(m for m in self.models if m not in self.pool)

    @property
    def instruction_protocols(self) -> dict:
        return {p: s for p, s in self.protocols.items() if p in NEEDS_INSTRUCTION}


def generation_plan(config: dict, models: dict, resolved: dict, tasks: dict) -> GenerationPlan:
    """Who writes code: the generators with an endpoint, where a task is built from the pool
    or no task is read from a release; and, whatever `enabled` says, every model a test set
    names. The protocols they write under, less those that need an instructor without one."""
    off: list[str] = []
    found, instructor_ok = _generators(config, models, resolved, off)
    wanted = any(t.mode == "build" for t in tasks.values()) or not any(t.mode == "release" for t in tasks.values())
    pool = tuple(found) if wanted else ()
    every = pool + tuple(m for m in _test_set_generators(tasks, models, config) if m not in pool)
    protocols = _protocols(config) if every else {}
    if every and not instructor_ok and any(p in NEEDS_INSTRUCTION for p in protocols):
        off.append("the instruction-based protocols (the instructor has no endpoint)")
    return GenerationPlan(
        models=every, pool=pool, off=tuple(off),
        protocols={p: s for p, s in protocols.items() if p not in NEEDS_INSTRUCTION or instructor_ok},
        instructor=(config.get("generation") or {}).get("instructor") if instructor_ok else None,
        planned=stage_on(config, "generation") and (wanted or bool(every)))


def _test_set_generators(tasks: dict, models: dict, config: dict) -> list[str]:
    """Registry models whose generations a task's test set scores (test_sets.X.generation)."""
    from ..common.errors import AicdError

    out = []
    for t, task in tasks.items():
        for name, spec in task.test_sets.items():
            model = spec.get("generation")
            if model is None:
                continue
            if model not in models:
                raise AicdError(f"config.tasks.{t}.test_sets.{name}.generation: {model!r} is not in the model "
                                "registry; add it in a models file layered on config/models.yaml (registry: "
                                "[config/models.yaml, my_models.yaml], docs/adding_a_generator.md)")
            if not (config.get("generation") or {}).get("protocols"):
                raise AicdError(f"config.tasks.{t}.test_sets.{name}.generation: the config has no generation "
                                "section with protocols to prompt by: layer the test set on config/demo.yaml, or "
                                "copy its generation section")
            if model not in out:
                out.append(model)
    return out


def _generators(config: dict, models: dict, resolved: dict, off: list) -> tuple[list[str], bool]:
    if not stage_on(config, "generation"):
        return [], False
    gen = config["generation"]
    if gen["enabled"] == "auto":
        names = [n for n in resolved.get("generators") or [] if n in models]  # a model since removed: gone
        if not names:
            off.append("generation")
        return names, bool(resolved.get("instructor"))
    names = list(models) if gen.get("models", schema_default("generation.models")) == "all" else list(gen["models"])
    return names, bool(gen.get("instructor"))


def _protocols(config: dict) -> dict:
    """Every protocol with its sources spelled out, so a job's params say exactly what it reads;
    a protocol with `n: 0` is left out (a layer turns off a protocol of the config below it)."""
    gen = config["generation"]
    return {p: {**spec, "sources": list(spec.get("sources") or [gen["source"]])}
            for p, spec in gen.get("protocols", {}).items() if int(spec["n"]) > 0}


def dropped_protocol_notes(tasks: dict, gen: GenerationPlan, dataset: dict | None, built: bool) -> list[str]:
    """One line per protocol whose rows are generated and then dropped by every task that
    would score them: a test set of a model's generations whose task has no class for them
    (`outside_labels: drop`), or pool code of a class no built task has. Turning the protocol
    off in the layer (`n: 0`) saves its requests."""
    from ..generate.protocols import PROTOCOL_LABELS

    protocols, notes = gen.protocols, []
    for t, task in tasks.items():
        for name, spec in task.test_sets.items():
            model = spec.get("generation")
            if model not in gen.models or not task.labels:
                continue
            lost = {p: PROTOCOL_LABELS[p] for p in protocols if PROTOCOL_LABELS[p] not in task.labels}
            if lost:
                rows = sum(int(protocols[p]["n"]) for p in lost)
                notes.append(f"Generation: test set {name} of task {t} drops the {'/'.join(sorted(set(lost.values())))} "
                             f"rows of {model}'s {', '.join(sorted(lost))} prompts (up to {rows} rows: not among the "
                             f"task's labels {list(task.labels)}, outside_labels: drop); set their n: 0 in your layer "
                             "to skip those requests.")
    if built and gen.pool and dataset and dataset.get("generations"):
        labels = {label for task in tasks.values() if task.mode == "build" for label in task.labels}
        lost = sorted(p for p in protocols if labels and PROTOCOL_LABELS[p] not in labels)
        if lost:
            notes.append(f"Generation: no built task has a class for the rows of the {', '.join(lost)} prompts "
                         f"({', '.join(sorted({PROTOCOL_LABELS[p] for p in lost}))}): they enter the pool and no task "
                         "scores them (add the fine-grained task, or set their n: 0).")
    return notes


def judge_plan(config: dict, models: dict, resolved: dict) -> tuple[dict, list[str]]:
    """The judges planned, and what is left out for want of an endpoint."""
    if not stage_on(config, "judging"):
        return {}, []
    judging = config["judging"]
    judges = dict(judging.get("judges") or {})
    if judging["enabled"] == "auto":
        judges = {j: s for j, s in judges.items() if j in (resolved.get("judges") or [])}
        if judging.get("judges") and not judges:
            return judges, ["judging (Table 8 will say 'not run')"]
    return judges, []


def _record(config: dict) -> str:
    return Outputs(config.get("results", schema_default("results"))).resolved()


def llm_notes(off: list, resolved: dict, models: dict, named: list, config: dict) -> list[str]:
    """The one LLM stages line, from the plan's own decision: what is left out and why (no
    endpoint here, or the recorded answer that this machine now contradicts), and what is
    planned all the same (a model a test set names)."""
    from ..generate.registry import endpoint_hint
    from ..resolve import short_answer as _short

    now = resolved.get("now") or {}
    what = {"generators": "generators with an endpoint", "instructor": "the instructor's endpoint",
            "judges": "judges with an endpoint"}
    changed = [f"{what[k]}: recorded {_short(resolved.get(k))}, this machine now says {_short(now[k])}"
               for k in what if k in now]
    if not off and not changed:
        return []
    named_too = (f"; {', '.join(named)} {'is' if len(named) == 1 else 'are'} generated all the same, for the test "
                 f"set{'s' if len(named) > 1 else ''} that name{'s' if len(named) == 1 else ''} "
                 f"{'it' if len(named) == 1 else 'them'}") if named else ""
    if off:
        left = " and ".join("generation for the pool" if o == "generation" and named else o for o in off)
        if changed:  # left out by the record, which this machine now contradicts
            return [f"LLM stages: {left} left out, as recorded in {_record(config)} ({'; '.join(changed)}): to take "
                    f"the change in, run with --config reprobe=true{named_too}."]
        return [f"LLM stages: no endpoint, so {left} left out; to enable, {endpoint_hint(models)}{named_too}."]
    return [f"LLM stages: planned as recorded in {_record(config)} ({'; '.join(changed)}), so jobs without an "
            "endpoint here will fail: give them one, or run with --config reprobe=true to plan from what this "
            f"machine says{named_too}."]


def execution_plan(config: dict, generators: list, resolved: dict, notes: list) -> list[str]:
    if not stage_on(config, "execution"):
        return []
    ex = config["execution"]
    names = list(ex.get("sources", [])) + (list(generators) if ex.get("generations") else [])
    if not names or ex["enabled"] != "auto":
        return names
    now = (resolved.get("now") or {}).get("execution")
    if not resolved.get("execution"):
        notes.append(f"Sandbox: execution left out, as recorded in {_record(config)} when no container engine "
                     "answered; one answers now: to take it in, run with --config reprobe=true." if now else
                     "Sandbox: no Docker daemon answers (nor Podman), so execution is left out (execution.enabled: "
                     "auto); to enable, install docker.io and start dockerd (see docs/sandbox.md).")
        return []
    if now is False:
        notes.append(f"Sandbox: {len(names)} execution jobs planned, as recorded in {_record(config)} when a container "
                     "engine answered; none answers now, so they will fail here: start it, or run with "
                     "--config reprobe=true to leave them out.")
    return names
