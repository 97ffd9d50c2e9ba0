"""The report's test-subset section: per task, each test subset's size and classes (a subset
that holds one class is said to, since its macro-F1 then scores that class alone), the best
trained detector's macro-F1 on it, per-language scores, and what the data could not give:
subsets inferred from identified languages, subsets the release cannot recover and why,
and label maps that are provisional."""

from __future__ import annotations

from .marks import MIN_CLASS_SUPPORT, SMALL_CLASS, small_classes


def _classes(target: dict) -> str:
    """'human 14 §, machine 139': a class under the minimum of rows marked."""
    return ", ".join(f"{k} {v}{' ' + SMALL_CLASS if 0 < int(v) < MIN_CLASS_SUPPORT else ''}"
                     for k, v in target.items()) or "none"


def _small(target: dict) -> bool:
    return any(0 < int(v) < MIN_CLASS_SUPPORT for v in target.values())


def _f1(entry: dict | None) -> str:
    if not entry or entry.get("macro_f1") is None:
        return "–"
    return f"{entry['macro_f1'] * 100:.2f}"


def _subset_value(entry: dict | None) -> str:
    """A subset's macro-F1, or where its rows hold one class that class's recall, named."""
    one = (entry or {}).get("one_class")
    recall = (((entry or {}).get("per_class") or {}).get(one) or {}).get("recall") if one else None
    return f"{one} recall {recall * 100:.2f}" if recall is not None else _f1(entry)


def _language_cell(lang: str, entry: dict) -> str:
    """'Go 25.00 (n = 2)', or for a language whose test rows hold one class its recall, named."""
    one = entry.get("one_class")
    if not one:
        return f"{lang} {_f1(entry)}{SMALL_CLASS if small_classes(entry) else ''} (n = {entry['n']})"
    recall = ((entry.get("per_class") or {}).get(one) or {}).get("recall")
    said = f"; {one} recall {recall * 100:.2f}" if recall is not None else ""
    return f"{lang} (n = {entry['n']}, **one class: {one}**{said})"


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
            lines += [f"| test subset | rows | classes | {head} (a one-class subset: its recall) |", "|---|---:|---|---:|"]
            for subset, summary in subsets.items():
                label = f"{subset} (inferred)" if "subset" in inferred else subset
                classes = _classes(summary["target"])
                note = one_class_note(summary)
                value = _subset_value(by.get("subset", {}).get(subset))
                small = SMALL_CLASS if _small(summary["target"]) and value != "–" else ""
                lines.append(f"| {label} | {summary['rows']} | {classes}{' **' + note + '**' if note else ''} "
                             f"| {value}{small} |")
            lines.append("")
            if any(_small(v["target"]) for v in subsets.values()):
                lines += [f"{SMALL_CLASS}: a class of the subset has fewer than {MIN_CLASS_SUPPORT} test rows; a value "
                          "resting on it (a macro-F1, where it weighs as much as the other class, or a one-class "
                          "subset's recall) concludes nothing.", ""]
            one = [s for s, v in subsets.items() if v.get("one_class")]
            if one:
                lines += [f"Subsets holding one class ({', '.join(one)}): a macro-F1 there would average over the one "
                          "class present and any class predicted, measuring that class's recall more than "
                          "discrimination, so its recall is given instead (as Tables 5-7 do).", ""]
        else:
            lines += ["No test subsets (the data names none and none could be rebuilt).", ""]
        languages = by.get("language") or {}
        if languages:
            origin = " (identified by aicd.normalize.langid)" if "language" in inferred else ""
            cells = ", ".join(_language_cell(lang, v) for lang, v in languages.items())
            lines += [f"Per language{origin}, {name}, macro-F1 × 100: {cells}.", ""]
            if any(small_classes(v) and not v.get("one_class") for v in languages.values()):
                lines += [f"{SMALL_CLASS}: a class of that language's test rows has fewer than {MIN_CLASS_SUPPORT} rows.", ""]
            if any(v.get("one_class") for v in languages.values()):
                lines += ["One class: that language's test rows hold one gold class, where a macro-F1 would measure "
                          "that class alone, so its recall is given instead (as Tables 5-7 do).", ""]
        for field, why in inferred.items():
            lines.append(f"- inferred **{field}**: {why}")
        for field, why in (notes.get("not_recoverable") or {}).items():
            lines.append(f"- not recoverable from the release, **{field}**: {why}")
        langid = rep.get("language_identification") or {}
        test_id = langid.get("test") or {}
        if test_id.get("identified"):
            # its time per row stays in the task report: a time would make two runs' reports differ
            lines.append(f"- language identification, test split: {test_id['identified']} of {test_id['rows']} rows "
                         f"({test_id['from_cache']} from the cache, {test_id['computed']} identified now; "
                         f"{test_id.get('low_margin', 0)} close calls, margin < 0.5)")
        if task in provisional:
            lines.append(f"- **label map provisional**: {provisional[task]}")
        lines.append("")
    return lines
