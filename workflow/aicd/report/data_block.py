"""The "What these data are" block at the top of report.md, generated from the run's task reports
(results/tasks/{task}/report.json), so it is true for any config: per task, each split's rows,
classes, domains and languages; the test slices that hold one class (domains, subsets,
languages), since a macro-F1 or a TPR there measures that class alone; the test domains the
validation split lacks (every threshold set on validation humans is set without them); and
which tasks are cut from one pool."""

from __future__ import annotations

from ..outputs import SHOWN

MODES = {"build": "cut from the dataset pool", "derive": "cut from one source", "release": "read from the release",
         "ood": "an out-of-distribution task"}
SHOWN_LANGUAGES = 6  # languages named per split; the rest counted
SPLIT_ORDER = ("train", "validation", "test")


def _counts(counts: dict) -> str:
    return ", ".join(f"{k} {v:,}" for k, v in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))) or "–"


def _languages(counts: dict) -> str:
    names = sorted(counts, key=lambda k: (-counts[k], k))
    shown = ", ".join(names[:SHOWN_LANGUAGES])
    return f"{len(names)}: {shown}" + (f" and {len(names) - SHOWN_LANGUAGES} more" if len(names) > SHOWN_LANGUAGES
                                       else "") if names else "–"


def split_table(rep: dict) -> list[str]:
    lines = ["| split | rows | classes | domains | languages |", "|---|---:|---|---|---|"]
    splits = rep.get("splits") or {}
    for split in sorted(splits, key=lambda k: (SPLIT_ORDER.index(k) if k in SPLIT_ORDER else len(SPLIT_ORDER), k)):
        s = splits[split]
        by = s.get("classes_by") or {}
        domains = {d: sum(v.values()) for d, v in (by.get("domain") or {}).items()}
        lines.append(f"| {split} | {s['rows']:,} | {_counts(s.get('target') or {})} | {_counts(domains)} | "
                     f"{_languages(s.get('language') or {})} |")
    return lines


def one_class(by: dict[str, dict[str, int]]) -> list[tuple[str, str, int]]:
    """(value, its one class, rows) of every value whose rows hold one class."""
    return [(v, next(iter(c)), sum(c.values())) for v, c in sorted(by.items()) if len(c) == 1]


def facts(rep: dict) -> list[str]:
    """What a reader of this task's numbers must know, each fact from the report's counts."""
    splits = rep.get("splits") or {}
    test = splits.get("test") or {}
    by = test.get("classes_by") or {}
    out = []
    val_domains = set(((splits.get("validation") or {}).get("classes_by") or {}).get("domain") or {})
    test_domains = by.get("domain") or {}
    missing = sorted(set(test_domains) - val_domains) if val_domains else []
    if missing:
        named = ", ".join(f"{d} ({sum(test_domains[d].values()):,} test rows)" for d in missing)
        out.append(f"The validation split holds only the {', '.join(sorted(val_domains))} domain"
                   f"{'s' if len(val_domains) > 1 else ''}; the test split also has {named}: every threshold set on "
                   "validation humans (the deployment view of the TPR at a fixed FPR) is set without them.")
    for what, rows in (("domain", one_class(test_domains)), ("language", one_class(by.get("language") or {}))):
        if rows:
            named = "; ".join(f"{v}: {n:,} rows, all {c}" for v, c, n in rows)
            out.append(f"Test {what}s that hold one class ({named}): a score there measures that class alone "
                       "(marked \"one class\" wherever it is printed).")
    subsets = [(s, v["one_class"], v["rows"]) for s, v in (rep.get("test_subsets") or {}).items() if v.get("one_class")]
    if subsets:
        named = "; ".join(f"{s}: {n:,} rows, all {c}" for s, c, n in subsets)
        out.append(f"Test subsets that hold one class ({named}).")
    train_langs = set((splits.get("train") or {}).get("language") or {})
    unseen = sorted(set(test.get("language") or {}) - train_langs) if train_langs else []
    if unseen:
        out.append(f"Test languages not in train: {', '.join(unseen)}.")
    return out


def adversarial_origin(rep: dict, mode: str | None) -> list[str]:
    """Where a pool-built task's adversarial rows come from: the generation stage's prompt, not a
    model trained to evade detection as the paper's are."""
    splits = rep.get("splits") or {}
    if mode != "build" or not any("adversarial" in (s.get("target") or {}) for s in splits.values()):
        return []
    return ["Its adversarial rows come from the generation stage's `adversarial` protocol: a generator prompted to "
            "write code that looks human-written. The paper's adversarial code comes from models trained to evade "
            "detection, so this class is easier to tell apart here than there."]


def pooled(modes: dict[str, str]) -> list[str]:
    built = [t for t, mode in modes.items() if mode == "build"]
    if len(built) < 2:
        return []
    return [f"- Tasks {', '.join(built)} are cut from one pool ({SHOWN.pool()}, the dataset stage's "
            "filtered and deduplicated rows), each split on its own: the same row may be in one task's train split "
            "and another's test split.", ""]


def data_block(task_reports: dict[str, dict], titles: dict[str, str], modes: dict[str, str]) -> list[str]:
    """Markdown lines; task_reports: task -> its report.json; modes: task -> build | derive | release | ood."""
    lines = ["## What these data are", ""]
    for task, title in titles.items():
        rep = task_reports.get(task)
        if rep is None:
            continue
        how = MODES.get(modes.get(task), modes.get(task) or "")
        lines += [f"**{title}** (`{task}`{', ' + how if how else ''}):", "", *split_table(rep), ""]
        lines += [f"- {fact}" for fact in facts(rep) + adversarial_origin(rep, modes.get(task))]
        lines.append("")
    lines += pooled({t: modes[t] for t in titles if t in modes})
    return lines if len(lines) > 2 else []
