"""The paper's three tasks, cut from the deduplicated pool (results/dataset/pool.parquet).

  binary        T1: human vs machine. Train/validation: seen languages in seen domains
                (C++, Java, Python; algorithmic). Test subsets: seen_language_seen_domain,
                unseen_language_seen_domain, seen_language_unseen_domain,
                unseen_language_unseen_domain.
  family        T2: human + model families. Generators held out per family (named in config,
                or drawn with the seed) appear only in test (subset unseen_generator); the
                rest are split normally (subset seen_generator; human rows count as seen).
  fine_grained  T3: human / machine / hybrid / adversarial. Rows of the out-of-domain
                sources (The Heap, SwallowCode) appear only in test (subset out_of_domain);
                the rest are split normally (subset in_domain).

Rows of the in-distribution part are split with the seeded stratified splitter; optional
`max_rows` caps each split by a seeded stratified sample. Leakage guards run on the result
(aicd.splits.leakage) and stop the build when violated."""

from __future__ import annotations

import logging

import numpy as np
import pandas as pd

from .. import published
from ..common.errors import AicdError
from ..data.families import FAMILIES, HUMAN
from ..data.schema import DOMAINS, LABELS, LANGUAGES, SPLITS
from .stratified import assign_splits, stratified_sample

log = logging.getLogger(__name__)

KINDS = published.TASK_KINDS
# In-distribution split fractions proportional to Table 1 (aicd/published.yaml, per task)
DEFAULT_FRACTIONS = {t.kind: t.fractions for t in published.PAPER_TASKS}
DEFAULT_OOD_SOURCES = ["the_heap", "swallowcode"]


def build_task(pool: pd.DataFrame, spec: dict, seed: int, task: str) -> tuple[dict[str, pd.DataFrame], dict]:
    kind = spec.get("kind")
    if kind not in KINDS:
        raise AicdError(f"task {task}: build.kind must be one of {KINDS}, got {kind!r}")
    fractions = spec.get("fractions", DEFAULT_FRACTIONS[kind])
    stratify = spec.get("stratify", ["language"])
    skipped: dict[str, int] = {}
    info: dict = {"kind": kind, "seed": seed, "fractions": fractions}

    if kind == "binary":
        rows = _only(pool, pool["label"].isin(["human", "machine"]), "label_not_binary", skipped)
        rows = _only(rows, rows["domain"].notna(), "domain_unknown", skipped)
        rows["target"] = rows["label"]
        seen_lang = spec.get("seen_languages", ["Python", "Java", "C++"])
        seen_dom = spec.get("seen_domains", ["algorithmic"])
        _check_names(seen_lang, LANGUAGES, f"task {task}: seen_languages")
        _check_names(seen_dom, DOMAINS, f"task {task}: seen_domains")
        lang_ok = rows["language"].isin(seen_lang)
        dom_ok = rows["domain"].isin(seen_dom)
        moved = ~(lang_ok & dom_ok)
        shifted = rows[moved].copy()
        shifted["subset"] = np.select(
            [lang_ok[moved], dom_ok[moved]],
            ["seen_language_unseen_domain", "unseen_language_seen_domain"],
            "unseen_language_unseen_domain")
        in_dist = rows[lang_ok & dom_ok].copy()
        seen_subset = "seen_language_seen_domain"
        info.update(seen_languages=seen_lang, seen_domains=seen_dom)
    elif kind == "family":
        rows = _only(pool, pool["label"].isin(["human", "machine"]), "label_not_human_or_machine", skipped)
        rows["target"] = np.where(rows["label"].eq("human"), HUMAN, rows["family"])
        rows = _only(rows, rows["target"].isin([HUMAN, *FAMILIES]), "family_unknown", skipped)
        held_out = _held_out_generators(rows, spec, seed)
        info["held_out_generators"] = held_out
        in_dist, shifted = _test_only(rows, rows["generator"].isin(held_out), "unseen_generator")
        seen_subset = "seen_generator"
    else:
        rows = _only(pool, pool["label"].isin(LABELS), "label_unknown", skipped)
        rows["target"] = rows["label"]
        ood = spec.get("out_of_domain_sources", DEFAULT_OOD_SOURCES)
        info["out_of_domain_sources"] = ood
        in_dist, shifted = _test_only(rows, rows["source"].isin(ood), "out_of_domain")
        seen_subset = "in_domain"

    by = ["target", *[c for c in stratify if c != "target"]]
    in_dist["split"] = assign_splits(in_dist, by, fractions, seed)
    for label, own in (spec.get("class_fractions") or {}).items():  # a small class's own split shares
        rows_of = in_dist["target"].eq(label)
        if rows_of.any():
            in_dist.loc[rows_of, "split"] = assign_splits(in_dist[rows_of], by, own, seed)
    if spec.get("class_fractions"):
        info["class_fractions"] = spec["class_fractions"]
    in_dist["subset"] = np.where(in_dist["split"].eq("test"), seen_subset, None)
    shifted["split"] = "test"
    allrows = pd.concat([in_dist, shifted], ignore_index=True)
    tables = {}
    caps = spec.get("max_rows") or {}
    for split in SPLITS:
        table = allrows[allrows["split"].eq(split)].drop(columns=["split"])
        if split in caps and len(table) > int(caps[split]):
            skipped[f"capped_{split}"] = len(table) - int(caps[split])
            table = stratified_sample(table, int(caps[split]), seed, ["subset", "target", "language"])
        tables[split] = table.sort_values("id").reset_index(drop=True)
    return tables, info | {"skipped": skipped}


def _test_only(rows: pd.DataFrame, mask: pd.Series, subset: str) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(rows to split normally, rows that go only to test under `subset`)."""
    shifted = rows[mask].copy()
    shifted["subset"] = subset
    return rows[~mask].copy(), shifted


def _only(df: pd.DataFrame, mask: pd.Series, reason: str, skipped: dict) -> pd.DataFrame:
    if (~mask).any():
        skipped[reason] = skipped.get(reason, 0) + int((~mask).sum())
    return df[mask].copy()


def _check_names(names, allowed, what: str) -> None:
    bad = [n for n in names if n not in allowed]
    if bad:
        raise AicdError(f"{what}: unknown {bad}; use names from {list(allowed)}")


def _held_out_generators(rows: pd.DataFrame, spec: dict, seed: int) -> list[str]:
    named = spec.get("held_out_generators")
    machine = rows[rows["label"].eq("machine")]
    if named is not None:
        missing = sorted(set(named) - set(machine["generator"].dropna()))
        if missing:
            log.warning("held-out generators with no rows in the pool: %s", missing)
        return sorted(named)
    per_family = int(spec.get("held_out_per_family", 1))
    chosen = []
    for family, gens in sorted(machine.groupby("family")["generator"].unique().items()):
        gens = sorted(g for g in gens if g is not None)
        if len(gens) < 2:  # a family with one generator must stay seen
            continue
        rng = np.random.default_rng([seed, sum(family.encode())])
        take = min(per_family, len(gens) - 1)
        chosen += [gens[i] for i in sorted(rng.choice(len(gens), size=take, replace=False))]
    return sorted(chosen)
