"""Raw table -> sample schema, with every removed row counted by reason.

Shared by the sources stage and by release task tables: column mapping, code checks
(missing, invalid UTF-8, binary, empty), canonical languages, label values (integer ids or
any strings, e.g. `ai generated`, `GPT-4o`) mapped to names through the config's label map (a
value that names no class is an error naming it and its count, unless `unmapped: drop`), and
an audit of that map against the generator column (a contradiction stops the run unless config asks for correction)."""

from __future__ import annotations

import logging
from collections import Counter, defaultdict
from dataclasses import dataclass

import pandas as pd

from ..codetools.codetext import clean_code, is_missing
from ..common.errors import AicdError
from ..data.families import FAMILIES, HUMAN, family_of, is_human
from ..data.schema import DOMAINS, LABELS, SAMPLE_COLUMNS, canonical_language, content_id

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


class Skip:
    """Why to_samples leaves a row out, beside clean_code's reasons for the code itself
    (missing_code, invalid_utf8, code_not_text, binary_content, empty_code, too_large): each is
    counted, with examples, in the report's `skipped`."""

    UNKNOWN_LANGUAGE = "unknown_language"  # a language value no canonical language matches
    MISSING_LABEL = "missing_label"  # no label value, and no default class or generator to take one from
    UNKNOWN_LABEL = "unknown_label"  # a label value that names no class (unmapped: drop)
    UNKNOWN_FAMILY = "unknown_family"  # a family target, and a generator of no known family
    DUPLICATE_ID = "duplicate_id"  # a source_row_id seen before
    DUPLICATE_CODE = "duplicate_code"  # the same language and code seen before
    LABEL_CONFLICT = "label_conflict"  # label_audit: correct, and the generator cannot settle the class


def label_key(value: object) -> str | None:
    """A label value as text: ids may arrive as int, float (from a csv with gaps) or str (the
    sources stage's normalisation, which scoring against a gold file repeats: aicd.scoring.external)."""
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
    keys = [label_key(v) for v in values]
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


# Schema fields read from a column of the same name when the spec maps no column to them.
SAME_NAME_FIELDS = ("code", "label", "language", "generator", "domain", "problem_id", "protocol", "subset")


@dataclass(frozen=True)
class IngestSpec:
    """A source spec, checked against its table."""

    columns: dict  # schema field -> column of the table
    carry: dict  # extra output column -> column of the table
    target: str  # the class the labels name: label or family
    label_map: dict  # label value (as label_key reads it) -> class
    unmapped: str  # one of UNMAPPED_MODES
    audit: str  # one of AUDIT_MODES
    defaults: dict  # field -> value for a field the table lacks


def read_spec(raw: pd.DataFrame, spec: dict, source: str) -> tuple[pd.DataFrame, IngestSpec, Counter]:
    """(the table with value_maps' columns added, the checked spec, value_maps' notes); a spec
    that does not fit the table is a clear error naming what is wrong."""
    columns = dict(spec.get("columns") or {})
    raw, value_notes = apply_value_maps(raw, spec, columns, source)
    for field in SAME_NAME_FIELDS:
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
    label_map = {label_key(k): v for k, v in (spec.get("label_map") or {}).items()}
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
    checked = IngestSpec(columns=columns, carry=carry, target=target, label_map=label_map, unmapped=unmapped_policy,
                         audit=audit, defaults=spec.get("defaults") or {})
    return raw, checked, value_notes


class RowReader:
    """One raw row -> its sample, or the reason it is left out. Remembers the ids it has kept
    (a later duplicate is skipped) and counts what the report lists beside the skips: unknown
    label values and languages, and notes (values set to null, missing languages)."""

    def __init__(self, raw: pd.DataFrame, spec: IngestSpec, source: str, notes: Counter) -> None:
        self.spec, self.source, self.notes = spec, source, notes
        self.get = {field: raw[col].tolist() for field, col in spec.columns.items()}
        self.carried = {name: raw[col].tolist() for name, col in spec.carry.items()}
        self.row_ids = self.get.get("source_row_id") or list(range(len(raw)))
        self.seen_row_ids: set[str] = set()
        self.seen_ids: set[str] = set()
        self.unknown_label_ids: Counter[str] = Counter()
        self.unknown_languages: Counter[str] = Counter()

    def sample(self, i: int) -> tuple[dict | None, str | None]:
        """(row i's sample, None), or (None, why it is skipped); checks in the order the report
        counts them (a row is counted once, under the first check it fails)."""
        code, reason = clean_code(self.get["code"][i])
        if reason:
            return None, reason
        language, reason = self._language(i)
        if reason:
            return None, reason
        generator = self._generator(i)
        name, reason = self._class_name(i, generator)
        if reason:
            return None, reason
        sample_id, reason = self._new_id(i, language, code)
        if reason:
            return None, reason
        return self._row(i, sample_id, code, language, generator, name), None

    def _field(self, field: str, i: int):
        return self.get[field][i] if field in self.get else self.spec.defaults.get(field)

    def _language(self, i: int) -> tuple[str | None, str | None]:
        """The canonical language (None when the row gives none: kept, noted)."""
        lang_raw = self._field("language", i)
        language = canonical_language(lang_raw)
        if language is None and not is_missing(lang_raw):
            self.unknown_languages[str(lang_raw)] += 1
            return None, Skip.UNKNOWN_LANGUAGE
        if language is None:
            self.notes["language_missing"] += 1
        return language, None

    def _generator(self, i: int) -> str | None:
        generator = self._field("generator", i)
        generator = None if is_missing(generator) or not str(generator).strip() else str(generator).strip()
        return HUMAN if generator is not None and is_human(generator) else generator

    def _class_name(self, i: int, generator: str | None) -> tuple[str | None, str | None]:
        """The row's class: from its label value, else the source's default class, else its generator."""
        target, defaults = self.spec.target, self.spec.defaults
        if "label" in self.get:
            key = label_key(self.get["label"][i])
            if key is None:
                return None, Skip.MISSING_LABEL
            name = map_label(key, self.spec.label_map, target)
            if name is None:
                self.unknown_label_ids[key] += 1
                return None, Skip.UNKNOWN_LABEL
            return name, None
        if defaults.get(target) is not None:  # a whole source of one class (SwallowCode: hybrid)
            name = defaults[target]
            if name not in _allowed_names(target):
                raise AicdError(f"{self.source}: defaults.{target} = {name!r} is not a valid {target} value")
            return name, None
        if generator is not None:
            name = HUMAN if generator == HUMAN else (family_of(generator) if target == "family" else "machine")
            return (None, Skip.UNKNOWN_FAMILY) if name is None else (name, None)
        return None, Skip.MISSING_LABEL

    def _new_id(self, i: int, language: str | None, code: str) -> tuple[str | None, str | None]:
        """The sample's content id, unless its source row id or its content was seen before."""
        if "source_row_id" in self.get:
            row_ref = str(self.row_ids[i])
            if row_ref in self.seen_row_ids:
                return None, Skip.DUPLICATE_ID
            self.seen_row_ids.add(row_ref)
        sample_id = content_id(language, code)
        if sample_id in self.seen_ids:
            return None, Skip.DUPLICATE_CODE
        self.seen_ids.add(sample_id)
        return sample_id, None

    def _row(self, i: int, sample_id: str, code: str, language: str | None, generator: str | None,
             name: str) -> dict:
        target, defaults = self.spec.target, self.spec.defaults
        domain = self._field("domain", i)
        if not is_missing(domain) and domain not in DOMAINS:
            self.notes["domain_unknown_set_null"] += 1
            domain = None
        family = family_of(generator)
        if generator is not None and family is None:
            self.notes["family_unknown"] += 1
        row = {
            "id": sample_id,
            "code": code,
            "label": name if target == "label" else ("human" if name == HUMAN else "machine"),
            "language": language,
            "domain": None if is_missing(domain) else domain,
            "source": self.source,
            "generator": generator,
            "family": name if target == "family" else family,
            "protocol": _value(self.get, "protocol", i, defaults),
            "problem_id": _value(self.get, "problem_id", i, defaults),
            "subset": _value(self.get, "subset", i, defaults),
            "source_row_id": str(self.row_ids[i]),
        }
        for column, values in self.carried.items():
            row[column] = None if is_missing(values[i]) else values[i]
        return row


def to_samples(raw: pd.DataFrame, spec: dict, source: str) -> tuple[pd.DataFrame, dict]:
    """Return (samples in the sample schema, report). rows_in == rows_out + skipped, always."""
    rows_in = len(raw)
    raw, checked, value_notes = read_spec(raw, spec, source)
    reader = RowReader(raw, checked, source, Counter(value_notes))
    skips = RowSkips()
    kept: list[dict] = []
    for i in range(rows_in):
        sample, reason = reader.sample(i)
        if reason:
            skips.add(reason, reader.row_ids[i])
        else:
            kept.append(sample)
    samples = pd.DataFrame(kept, columns=[*SAMPLE_COLUMNS, "source_row_id", *reader.carried])
    samples, audit_report = audit_labels(samples, checked.target, checked.audit, source, skips)
    samples, not_sampled = _keep_at_most(samples, spec.get("limit"))
    report = _report(reader, rows_in, samples, skips, not_sampled, audit_report)
    for reason, n in skips.counts.items():
        log.warning("%s: skipped %d rows: %s", source, n, reason)
    log.info("%s: %d rows in, %d kept", source, rows_in, len(samples))
    return samples, report


def _keep_at_most(samples: pd.DataFrame, limit: int | None) -> tuple[pd.DataFrame, int]:
    """(the samples sorted by id, at most `limit` of them, the number left out). The id is a
    content hash, so "lowest ids" is a deterministic pseudo-random sample."""
    not_sampled = 0
    if limit is not None and len(samples) > limit:
        not_sampled = len(samples) - int(limit)
        samples = samples.sort_values("id").head(int(limit))
    return samples.sort_values("id").reset_index(drop=True), not_sampled


def _report(reader: RowReader, rows_in: int, samples: pd.DataFrame, skips: RowSkips, not_sampled: int,
            audit_report: dict) -> dict:
    report = {
        "source": reader.source,
        "rows_in": int(rows_in),
        "rows_out": int(len(samples)),
        "skipped": skips.as_dict(),
        "not_sampled": not_sampled,
        "unknown_label_ids": dict(reader.unknown_label_ids),
        "unmapped": reader.spec.unmapped,
        "unknown_languages": dict(reader.unknown_languages.most_common(20)),
        "label_audit": audit_report,
        "notes": dict(reader.notes),
        "counts": {
            "label": samples["label"].value_counts().to_dict(),
            "language": samples["language"].value_counts(dropna=False).rename(lambda k: str(k)).to_dict(),
        },
    }
    assert report["rows_in"] == report["rows_out"] + skips.total() + not_sampled, "row accounting broken"
    return report


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
        skips.add(Skip.LABEL_CONFLICT, ref)
    report["corrected"] = int(fixable.sum())
    report["uncorrectable"] = int((~fixable).sum())
    report["groups"] = int(len(groups))
    report["example"] = detail
    log.warning("%s: corrected %d labels from the generator column (label_audit: correct)", source, report["corrected"])
    samples = samples.drop(index=idx[~fixable.to_numpy()])
    return samples, report
