"""Raw table -> sample schema, with every removed row counted by reason.

Shared by the sources stage and by release task tables: column mapping, code checks
(missing, invalid UTF-8, binary, empty), canonical languages, label values (integer ids or
any strings, e.g. `ai generated`, `GPT-4o`) mapped to names through the config's label map (a
value that names no class is an error naming it and its count, unless `unmapped: drop`), and
an audit of that map against the generator column (a contradiction stops the run unless config asks for correction)."""

from __future__ import annotations

import logging
from collections import Counter, defaultdict

import pandas as pd

from ..codetext import clean_code, is_missing
from ..errors import AicdError
from ..families import FAMILIES, HUMAN, family_of, is_human
from ..schema import DOMAINS, LABELS, SAMPLE_COLUMNS, canonical_language, content_id

log = logging.getLogger(__name__)

EXAMPLES_PER_REASON = 5
AUDIT_MODES = ("error", "correct", "off")
UNMAPPED_MODES = ("error", "drop")  # a label value that names no class: stop, or leave the row out (counted)


class RowSkips:
    """Counts removed rows by reason and keeps a few examples of each for the report."""

    def __init__(self) -> None:
        self.counts: Counter[str] = Counter()
        self.examples: dict[str, list[str]] = defaultdict(list)

    def add(self, reason: str, ref: object) -> None:
        self.counts[reason] += 1
        if len(self.examples[reason]) < EXAMPLES_PER_REASON:
            self.examples[reason].append(str(ref))

    def total(self) -> int:
        return sum(self.counts.values())

    def as_dict(self) -> dict:
        return {"counts": dict(sorted(self.counts.items())), "examples": dict(self.examples)}





def _label_key(value: object) -> str | None:
    """Label ids may arrive as int, float (from a csv with gaps) or str; normalise to str."""
    if is_missing(value):
        return None
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    return str(value).strip()


def _allowed_names(target: str) -> set[str]:
    return set(LABELS) if target == "label" else set(FAMILIES) | {HUMAN}


def map_label(key: str, label_map: dict[str, str], target: str) -> str | None:
    """The class a label value names: its label_map entry, else the value itself when it is
    already a class name (so a partial map such as {hybrid: machine} overrides, never drops);
    None when neither."""
    if key in label_map:
        return label_map[key]
    return key if key in _allowed_names(target) else None


def check_labels_mapped(values, label_map: dict[str, str], target: str, source: str) -> None:
    """Every label value must name a class, through label_map or as itself; else one error
    naming each value with its row count (`unmapped: drop` leaves those rows out, counted)."""
    keys = [_label_key(v) for v in values]
    unmapped = Counter(k for k in keys if k is not None and map_label(k, label_map, target) is None)
    if not unmapped:
        return
    named = ", ".join(f"{k!r} ({n} row{'s' * (n != 1)})" for k, n in unmapped.most_common(12))
    more = f" and {len(unmapped) - 12} more" if len(unmapped) > 12 else ""
    classes = sorted(_allowed_names(target)) if target == "family" else list(LABELS)
    if label_map:
        total = sum(unmapped.values())
        raise AicdError(f"{source}: {total} row{'s' * (total != 1)} have label values not in label_map: {named}{more}. "
                        f"Map each to one of {classes} in label_map, or set unmapped: drop to leave those rows "
                        "out (counted in the report)")
    example = ", ".join(f"{k}: <{target}>" for k in sorted(unmapped)[:2])
    raise AicdError(f"{source}: the label column holds values that are not {target} names: {named}{more}. "
                    f"Add a label_map naming each (e.g. label_map: {{{example}}}; the {target} names are {classes}), "
                    "or set unmapped: drop")


def to_samples(raw: pd.DataFrame, spec: dict, source: str) -> tuple[pd.DataFrame, dict]:
    """Return (samples in the sample schema, report). rows_in == rows_out + skipped, always."""
    columns = dict(spec.get("columns") or {})
    raw, value_notes = apply_value_maps(raw, spec, columns, source)
    for field in ("code", "label", "language", "generator", "domain", "problem_id", "protocol", "subset"):
        if field not in columns and field in raw.columns:
            columns[field] = field
    if "code" not in columns:
        raise AicdError(
            f"{source}: the table has no 'code' column (columns: {', '.join(map(str, raw.columns))}). "
            f"Name the column that holds the source text with columns: {{code: <name>}}"
        )
    carry = dict(spec.get("carry") or {})
    absent = {f: c for f, c in {**columns, **carry}.items() if c not in raw.columns}
    if absent:
        field, col = next(iter(absent.items()))
        raise AicdError(
            f"{source}: column '{col}' (mapped to '{field}') is not in the table; "
            f"its columns are: {', '.join(map(str, raw.columns))}"
        )
    target = spec.get("target", "label")
    label_map = {_label_key(k): v for k, v in (spec.get("label_map") or {}).items()}
    bad_names = sorted(set(label_map.values()) - _allowed_names(target))
    if bad_names:
        raise AicdError(f"{source}: label_map names {bad_names} are not valid {target} values")
    unmapped_policy = spec.get("unmapped", "error")
    if unmapped_policy not in UNMAPPED_MODES:
        raise AicdError(f"{source}: unmapped must be one of {UNMAPPED_MODES}, got {unmapped_policy!r}")
    if "label" in columns and unmapped_policy == "error":
        check_labels_mapped(raw[columns["label"]], label_map, target, source)
    audit = spec.get("label_audit", "error")
    if audit not in AUDIT_MODES:
        raise AicdError(f"{source}: label_audit must be one of {AUDIT_MODES}, got {audit!r}")
    defaults = spec.get("defaults") or {}

    skips = RowSkips()
    notes: Counter[str] = Counter(value_notes)
    rows: list[dict] = []
    seen_row_ids: set[str] = set()
    seen_ids: set[str] = set()
    unknown_label_ids: Counter[str] = Counter()
    unknown_languages: Counter[str] = Counter()
    get = {field: raw[col].tolist() for field, col in columns.items()}
    carried = {name: raw[col].tolist() for name, col in carry.items()}
    row_ids = get.get("source_row_id") or list(range(len(raw)))

    for i in range(len(raw)):
        ref = row_ids[i]
        code, reason = clean_code(get["code"][i])
        if reason:
            skips.add(reason, ref)
            continue
        lang_raw = get["language"][i] if "language" in get else defaults.get("language")
        language = canonical_language(lang_raw)
        if language is None and not is_missing(lang_raw):
            unknown_languages[str(lang_raw)] += 1
            skips.add("unknown_language", ref)
            continue
        if language is None:
            notes["language_missing"] += 1

        generator = get["generator"][i] if "generator" in get else defaults.get("generator")
        generator = None if is_missing(generator) or not str(generator).strip() else str(generator).strip()
        if generator is not None and is_human(generator):
            generator = HUMAN

        name = None
        if "label" in get:
            key = _label_key(get["label"][i])
            if key is None:
                skips.add("missing_label", ref)
                continue
            name = map_label(key, label_map, target)
            if name is None:
                unknown_label_ids[key] += 1
                skips.add("unknown_label", ref)
                continue
        elif defaults.get(target) is not None:  # a whole source of one class (SwallowCode: hybrid)
            name = defaults[target]
            if name not in _allowed_names(target):
                raise AicdError(f"{source}: defaults.{target} = {name!r} is not a valid {target} value")
        elif generator is not None:
            name = HUMAN if generator == HUMAN else (family_of(generator) if target == "family" else "machine")
            if name is None:
                skips.add("unknown_family", ref)
                continue
        else:
            skips.add("missing_label", ref)
            continue

        row_ref = str(ref)
        if "source_row_id" in get:
            if row_ref in seen_row_ids:
                skips.add("duplicate_id", ref)
                continue
            seen_row_ids.add(row_ref)
        sample_id = content_id(language, code)
        if sample_id in seen_ids:
            skips.add("duplicate_code", ref)
            continue
        seen_ids.add(sample_id)

        domain = get["domain"][i] if "domain" in get else defaults.get("domain")
        if not is_missing(domain) and domain not in DOMAINS:
            notes["domain_unknown_set_null"] += 1
            domain = None
        family = family_of(generator)
        if generator is not None and family is None:
            notes["family_unknown"] += 1
        row = {
            "id": sample_id,
            "code": code,
            "label": name if target == "label" else ("human" if name == HUMAN else "machine"),
            "language": language,
            "domain": None if is_missing(domain) else domain,
            "source": source,
            "generator": generator,
            "family": name if target == "family" else family,
            "protocol": _value(get, "protocol", i, defaults),
            "problem_id": _value(get, "problem_id", i, defaults),
            "subset": _value(get, "subset", i, defaults),
            "source_row_id": row_ref,
        }
        for name, values in carried.items():
            row[name] = None if is_missing(values[i]) else values[i]
        rows.append(row)

    samples = pd.DataFrame(rows, columns=[*SAMPLE_COLUMNS, "source_row_id", *carried])
    samples, audit_report = audit_labels(samples, target, audit, source, skips)

    limit = spec.get("limit")
    not_sampled = 0
    if limit is not None and len(samples) > limit:
        # The id is a content hash, so "lowest ids" is a deterministic pseudo-random sample.
        not_sampled = len(samples) - int(limit)
        samples = samples.sort_values("id").head(int(limit))
    samples = samples.sort_values("id").reset_index(drop=True)

    report = {
        "source": source,
        "rows_in": int(len(raw)),
        "rows_out": int(len(samples)),
        "skipped": skips.as_dict(),
        "not_sampled": not_sampled,
        "unknown_label_ids": dict(unknown_label_ids),
        "unmapped": unmapped_policy,
        "unknown_languages": dict(unknown_languages.most_common(20)),
        "label_audit": audit_report,
        "notes": dict(notes),
        "counts": {
            "label": samples["label"].value_counts().to_dict(),
            "language": samples["language"].value_counts(dropna=False).rename(lambda k: str(k)).to_dict(),
        },
    }
    assert report["rows_in"] == report["rows_out"] + skips.total() + not_sampled, "row accounting broken"
    for reason, n in skips.counts.items():
        log.warning("%s: skipped %d rows: %s", source, n, reason)
    log.info("%s: %d rows in, %d kept", source, len(raw), len(samples))
    return samples, report


def apply_value_maps(raw: pd.DataFrame, spec: dict, columns: dict, source: str) -> tuple[pd.DataFrame, Counter]:
    """`value_maps: {field: {column, map, default}}`: a schema field computed from a column's
    values (DroidCollection's `Source` -> `domain`). Values the map does not name take
    `default`, or null (counted in the report's notes). Updates `columns` in place."""
    notes: Counter[str] = Counter()
    for field, vm in (spec.get("value_maps") or {}).items():
        col = vm.get("column")
        if col not in raw.columns:
            raise AicdError(f"{source}: value_maps.{field}: column '{col}' is not in the table; "
                            f"its columns are: {', '.join(map(str, raw.columns))}")
        mapping = {str(k): v for k, v in (vm.get("map") or {}).items()}
        default = vm.get("default")
        values = []
        for v in raw[col].tolist():
            key = None if is_missing(v) else str(v).strip()
            out = mapping.get(key, default) if key is not None else default
            if out is None:
                notes[f"value_unmapped:{field}"] += 1
            values.append(out)
        derived = f"__{field}"
        raw = raw.assign(**{derived: values})
        columns[field] = derived
    return raw, notes


def _value(get: dict, field: str, i: int, defaults: dict):
    value = get[field][i] if field in get else defaults.get(field)
    return None if is_missing(value) else str(value)


def audit_labels(samples: pd.DataFrame, target: str, mode: str, source: str, skips: RowSkips) -> tuple[pd.DataFrame, dict]:
    """Check mapped labels against the generator column, where one exists.

    A row whose generator is human must carry the human class and vice versa; for a family
    target the family must equal family_of(generator) where that is known."""
    report = {"mode": mode, "checked": 0, "conflicts": 0, "corrected": 0, "uncorrectable": 0}
    has_gen = samples["generator"].notna()
    if mode == "off" or not has_gen.any():
        return samples, report
    checked = samples[has_gen]
    gen_human = checked["generator"].eq(HUMAN)
    col = "label" if target == "label" else "family"
    mapped_human = checked[col].eq(HUMAN)
    conflict = gen_human.ne(mapped_human)
    expected = pd.Series(None, index=checked.index, dtype=object)
    if target == "family":
        expected = checked["generator"].map(family_of)
        conflict |= expected.notna() & expected.ne(checked["family"])
    report["checked"] = int(len(checked))
    report["conflicts"] = n_conflicts = int(conflict.sum())
    if n_conflicts == 0:
        return samples, report

    bad = checked[conflict]
    groups = bad.groupby(["generator", col]).size().sort_values(ascending=False)
    worst = groups.head(3)
    detail = (f"the largest {len(worst)} of {len(groups)} (generator, label) groups: " if len(groups) > len(worst)
              else "") + "; ".join(f"generator '{g}' labelled '{lab}' ({n} rows)" for (g, lab), n in worst.items())
    if mode == "error":
        share = n_conflicts / len(checked)
        hint = " The label map looks reversed." if share > 0.9 else ""
        raise AicdError(
            f"{source}: label_map contradicts the generator column in {n_conflicts} of "
            f"{len(checked)} rows ({share:.1%}): {detail}.{hint} Fix label_map, or set "
            "label_audit: correct to take these labels from the generator column (counted in the report)."
        )
    # mode == "correct": derive the class from the generator where that is unambiguous.
    idx = bad.index
    if target == "family":
        fixed = expected.loc[idx]
        samples.loc[idx, "family"] = fixed
        samples.loc[idx, "label"] = fixed.map(lambda f: None if f is None else ("human" if f == HUMAN else "machine"))
        fixable = fixed.notna()
    else:
        binary_only = set(samples["label"].dropna().unique()) <= {"human", "machine"}
        fixed = bad["generator"].map(lambda g: "human" if g == HUMAN else ("machine" if binary_only else None))
        samples.loc[idx, "label"] = fixed
        fixable = fixed.notna()
    for ref in bad.loc[~fixable, "source_row_id"]:
        skips.add("label_conflict", ref)
    report["corrected"] = int(fixable.sum())
    report["uncorrectable"] = int((~fixable).sum())
    report["groups"] = int(len(groups))
    report["example"] = detail
    log.warning("%s: corrected %d labels from the generator column (label_audit: correct)", source, report["corrected"])
    samples = samples.drop(index=idx[~fixable.to_numpy()])
    return samples, report
