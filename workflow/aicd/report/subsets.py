"""The report's test-subset section: per task, each test subset's size and classes (a subset
that holds one class is said to, since its macro-F1 then scores that class alone), the best
trained detector's macro-F1 on it, per-language scores, and what the data could not give:
subsets inferred from identified languages, subsets the release cannot recover and why,
and label maps that are provisional."""

from __future__ import annotations


def _classes(target: dict) -> str:
    return ", ".join(f"{k} {v}" for k, v in target.items()) or "none"


def _f1(entry: dict | None) -> str:
    if not entry or entry.get("macro_f1") is None:
        return "–"
    return f"{entry['macro_f1'] * 100:.2f}"


def one_class_note(summary: dict) -> str:
    """'(one class: human only)' for a subset whose test rows are all of one class, else ''."""
    return f"(one class: {summary['one_class']} only)" if summary.get("one_class") else ""


def subset_section(task_reports: dict[str, dict], titles: dict[str, str], best: dict[str, tuple[str, dict]],
                   provisional: dict[str, str]) -> list[str]:
    """Markdown lines. task_reports: task -> results/tasks/{task}/report.json; best: task ->
    (detector title, its scores JSON); provisional: task -> evidence of an unpublished label map."""
    lines = ["## Test subsets and per-language scores", ""]
    for task, title in titles.items():
        rep = task_reports.get(task)
        if rep is None:
            continue
        lines += [f"### {title}", ""]
        name, scores = best.get(task, (None, {}))
        by = (scores or {}).get("by", {})
        notes = rep.get("subset_notes") or {}
        inferred = notes.get("inferred") or {}
        subsets = rep.get("test_subsets") or {}
        if subsets:
            head = f"macro-F1 × 100 ({name})" if name else "macro-F1 × 100"
            lines += [f"| test subset | rows | classes | {head} |", "|---|---:|---|---:|"]
            for subset, summary in subsets.items():
                label = f"{subset} (inferred)" if "subset" in inferred else subset
                classes = _classes(summary["target"])
                note = one_class_note(summary)
                lines.append(f"| {label} | {summary['rows']} | {classes}{' **' + note + '**' if note else ''} "
                             f"| {_f1(by.get('subset', {}).get(subset))} |")
            lines.append("")
            one = [s for s, v in subsets.items() if v.get("one_class")]
            if one:
                lines += [f"Subsets holding one class ({', '.join(one)}): macro-F1 there averages over the one "
                          "class present and any class predicted, so it measures that class's recall more than "
                          "discrimination.", ""]
        else:
            lines += ["No test subsets (the data names none and none could be rebuilt).", ""]
        languages = by.get("language") or {}
        if languages:
            origin = " (identified by aicd.normalize.langid)" if "language" in inferred else ""
            cells = ", ".join(f"{lang} {_f1(v)} (n = {v['n']})" for lang, v in languages.items())
            lines += [f"Per language{origin}, {name}: {cells}.", ""]
        for field, why in inferred.items():
            lines.append(f"- inferred **{field}**: {why}")
        for field, why in (notes.get("not_recoverable") or {}).items():
            lines.append(f"- not recoverable from the release, **{field}**: {why}")
        langid = rep.get("language_identification") or {}
        test_id = langid.get("test") or {}
        if test_id.get("identified"):
            cost = f", {test_id['ms_per_row']} ms per row" if test_id.get("ms_per_row") is not None else ""
            lines.append(f"- language identification, test split: {test_id['identified']} of {test_id['rows']} rows "
                         f"({test_id['from_cache']} from the cache, {test_id['computed']} identified now{cost}; "
                         f"{test_id.get('low_margin', 0)} close calls, margin < 0.5)")
        if task in provisional:
            lines.append(f"- **label map provisional**: {provisional[task]}")
        lines.append("")
    return lines
