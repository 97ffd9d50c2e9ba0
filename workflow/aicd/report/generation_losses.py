"""Where a generator's rows went: every prompt skipped and every row dropped between the human
rows sampled and the rows a task scores, counted by stage and reason, with one example each.
The generator card (aicd.report.generator_card) and report.md show it.

Stages, in order: a sampled human row that gave no prompt (generations/{model}.report.json,
`skipped_before_prompting`), a request that failed, an answer with no code block, a row the code
checks or Table 3 filters rejected (dataset/normalized/generations/{model}.report.json), and a row
a test set of its generations removed (tasks/{task}/test_sets/{set}.report.json: e.g. a class
outside the task's labels)."""

from __future__ import annotations

from ..outputs import relative

STAGES = ("prompting", "request", "answer", "filters", "test set")


def losses(report: dict, normalized: dict | None = None, test_sets: list[dict] | None = None) -> list[dict]:
    """[{stage, reason, rows, example}] for one generator, in pipeline order."""
    out = []
    examples = report.get("skipped_examples") or {}
    for reason, n in (report.get("skipped_before_prompting") or {}).items():
        out.append({"stage": "prompting", "reason": reason, "rows": int(n), "example": examples.get(reason)})
    if report.get("failed_requests"):
        out.append({"stage": "request", "reason": "failed", "rows": int(report["failed_requests"]),
                    "example": report.get("failed_example")})
    no_block = report.get("no_code_block") or {}
    if no_block.get("count"):
        out.append({"stage": "answer", "reason": "no_code_block", "rows": int(no_block["count"]),
                    "example": _one_line(no_block.get("example"))})
    if normalized:
        shown = normalized.get("examples") or {}
        for reason, n in sorted((normalized.get("rejected") or {}).items(), key=lambda kv: -kv[1]):
            if reason in ("no_code_block",):  # counted at the answer stage
                continue
            out.append({"stage": "filters", "reason": reason, "rows": int(n), "example": shown.get(reason)})
    for rep in test_sets or []:
        shown = rep.get("removed_examples") or {}
        for reason, n in (rep.get("removed") or {}).items():
            if reason.startswith("filtered:"):  # the filters' own rows, counted above
                continue
            out.append({"stage": "test set", "reason": f"{rep['task']}/{rep['test_set']}: {reason}", "rows": int(n),
                        "example": shown.get(reason)})
    return out


def _one_line(text, chars: int = 160) -> str | None:
    return " ".join(str(text).split())[:chars] if text else None


def losses_lines(items: list[dict], heading: str = "## Skipped and dropped") -> list[str]:
    """Markdown: one row per stage and reason, with its example."""
    lines = [heading, ""]
    if not items:
        return lines + ["Every prompt was sent and every answer kept as a row (no prompt skipped, no row dropped).", ""]
    lines += ["Every prompt skipped and row dropped on the way from the sampled human rows to the scored ones, with "
              "the first one of each reason.", "", "| stage | reason | rows | example |", "|---|---|---:|---|"]
    for item in items:
        example = _one_line(item.get("example")) or "–"
        lines.append(f"| {item['stage']} | {item['reason']} | {item['rows']:,} | {example.replace('|', '¦')} |")
    return lines + [""]


def summary_line(model: str, items: list[dict]) -> str:
    """One line for report.md: the counts per stage, and where the card lists them with examples."""
    by_stage: dict[str, int] = {}
    for item in items:
        by_stage[item["stage"]] = by_stage.get(item["stage"], 0) + item["rows"]
    if not by_stage:
        return f"- {model}: no prompt skipped, no row dropped."
    parts = ", ".join(f"{stage} {by_stage[stage]:,}" for stage in STAGES if stage in by_stage)
    first = items[0]
    return (f"- {model}: skipped or dropped by stage: {parts}; e.g. {first['stage']} {first['reason']}: "
            f"{_one_line(first.get('example'), 100) or '–'} (all of them, with an example each: its generator card)")


def report_section(cards: list[dict]) -> list[str]:
    """report.md's section: per generator (its card's JSON), what was skipped or dropped, with
    an example of each reason."""
    if not cards:
        return []
    lines = ["## Generated code: skipped and dropped", "",
             "Per generator model, every prompt skipped and row dropped between the human rows sampled and the rows "
             f"a task scores (its card, `{relative('generator_card', 'md')}`, says the same).", ""]
    for card in sorted(cards, key=lambda c: c["model"]):
        items = card.get("skipped_and_dropped") or []
        lines += [summary_line(card["model"], items), ""]
        lines += losses_lines(items, heading=f"### {card['model']}")[2:] if items else []
    return lines
