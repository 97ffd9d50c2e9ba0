"""Languages and test subsets for release tables that carry only `code` and `label`.

The published AICD Bench splits (AICD-bench/AICD-Bench, configs T1-T3) have no language,
domain, generator or source column. Every row without a language gets one from
aicd.normalize.langid (99.1-99.6% accurate on real code; BENCHMARKS.md), cached per split in
`{cache_dir}/{split}.parquet` (id, language, margin): a rerun identifies only rows the cache
does not hold, and a killed job keeps what it had checkpointed. The cache records a hash of
the identifier's source, so a changed identifier starts afresh instead of reusing old answers.

From those languages T1's test rows get the language half of the paper's four subsets
(`seen_language` / `unseen_language`), marked as inferred. What cannot be recovered from code
and label alone (domain, generator, source) is named in the task report with the reason."""

from __future__ import annotations

import hashlib
import logging
import time
from pathlib import Path

import numpy as np
import pandas as pd

from .. import published
from ..common.errors import AicdError
from ..common.io import write_parquet
from ..common.parallel import map_chunks
from ..data.schema import LANGUAGES
from ..normalize import langid

log = logging.getLogger(__name__)

CHUNK = 500                 # rows per worker task
CHECKPOINT_ROWS = 50_000    # rows identified between cache writes
# Margins (best minus runner-up score) below this are close calls: on 800 trial rows every
# miss had a margin under 0.6, while the median hit had 1.09. The identifier settles a margin
# exactly below its DECISIVE (and gives a lower bound above), so the count of close calls is exact.
LOW_MARGIN = langid.DECISIVE

# Why a subset of the paper cannot be rebuilt from a table of code and label ({task}: the paper's
# task whose test subsets are cut by that column, aicd.published).
NOT_RECOVERABLE = {
    "domain": ("the release has no domain or source column, and whether a row is algorithmic, research or "
               "general-purpose code is not something its text tells reliably (no validated classifier), so "
               "{task}'s seen/unseen-domain half is not reported: seen_language and unseen_language each mix domains"),
    "generator": ("the release has no generator column (the label names the family only) and the paper does not "
                  "list which generators were held out, so {task}'s seen/unseen-generator subsets cannot be rebuilt"),
    "source": ("{task}'s in/out-of-domain split is by source (The Heap and SwallowCode only in test); the release has "
               "no source column, so the out-of-domain rows cannot be told apart"),
}
PAPER_SUBSETS = {t.kind: list(t.subsets) for t in published.PAPER_TASKS}


def not_recoverable(column: str) -> str:
    """Why the paper's subsets by `column` cannot be rebuilt from a release table."""
    task = next(t for t in published.PAPER_TASKS if column in t.subsets)
    return NOT_RECOVERABLE[column].format(task=task.column)


def langid_version() -> str:
    """Hash of the identifier's source: the cache is valid only for the identifier that wrote it."""
    return hashlib.sha256(Path(langid.__file__).read_bytes()).hexdigest()[:16]


def _identify_chunk(codes: list[str]) -> list[tuple[str | None, float]]:
    out = []
    for code in codes:
        language, margin, _ = langid.identify_language(code)
        out.append((language, float(margin)))
    return out


def read_cache(path: Path | None) -> pd.DataFrame:
    """The cached (id, language, margin) rows written by this identifier version."""
    empty = pd.DataFrame({"id": pd.Series(dtype=str), "language": pd.Series(dtype=object),
                          "margin": pd.Series(dtype=float)})
    if path is None or not path.is_file():
        return empty
    try:
        cache = pd.read_parquet(path)
    except Exception as err:  # a cache is a convenience: an unreadable one is rebuilt, not fatal
        log.warning("language cache %s is unreadable (%s): identifying afresh", path, err)
        return empty
    if set(cache.columns) != {"id", "language", "margin", "langid_version"}:
        log.warning("language cache %s has columns %s: identifying afresh", path, list(cache.columns))
        return empty
    stale = cache["langid_version"].ne(langid_version())
    if stale.any():
        log.info("language cache %s: %d rows from another identifier version dropped", path, int(stale.sum()))
    return cache.loc[~stale, ["id", "language", "margin"]]


def _write_cache(known: dict[str, tuple[str | None, float]], path: Path) -> None:
    ids = list(known)
    write_parquet(pd.DataFrame({
        "id": ids,
        "language": [known[i][0] for i in ids],
        "margin": [known[i][1] for i in ids],
        "langid_version": langid_version(),
    }), path)


def identify_languages(table: pd.DataFrame, cache_path: str | Path | None, threads: int = 1,
                       what: str = "") -> tuple[pd.DataFrame, dict]:
    """Fill `language` where it is null, from the cache or aicd.normalize.langid.

    Returns the table with a `language_origin` column (given | identified) and a report:
    rows given / identified, how many came from the cache, the time per identified row."""
    table = table.copy()
    missing = table["language"].isna()
    origin = np.where(missing, "identified", "given").astype(object)
    report = {"rows": int(len(table)), "given": int((~missing).sum()), "identified": int(missing.sum()),
              "from_cache": 0, "computed": 0, "seconds": 0.0, "ms_per_row": None, "unidentified": 0,
              "low_margin": 0, "cache": str(cache_path) if cache_path else None}
    if not missing.any():
        table["language_origin"] = origin
        return table, report
    path = Path(cache_path) if cache_path else None
    cache = read_cache(path)
    known = dict(zip(cache["id"], zip(cache["language"], cache["margin"])))
    wanted = table.loc[missing, ["id", "code"]]
    todo = wanted[~wanted["id"].isin(known)].drop_duplicates("id")
    report["from_cache"] = int(len(wanted) - wanted["id"].isin(todo["id"]).sum())
    report["computed"] = int(len(todo))
    if len(todo):
        log.info("%s: identifying the language of %d rows (%d from the cache) on %d process(es)",
                 what, len(todo), report["from_cache"], threads)
        start = time.perf_counter()
        ids, codes = todo["id"].tolist(), todo["code"].tolist()
        chunks = [(ids[i:i + CHUNK], codes[i:i + CHUNK]) for i in range(0, len(ids), CHUNK)]
        done_since_write = 0
        results = map_chunks(_identify_chunk, [c for _, c in chunks], threads)
        for (chunk_ids, _), answers in zip(chunks, results):
            known.update(zip(chunk_ids, answers))
            done_since_write += len(chunk_ids)
            if path and done_since_write >= CHECKPOINT_ROWS:
                _write_cache({i: known[i] for i in table["id"] if i in known}, path)
                done_since_write = 0
                log.info("%s: %d of %d rows identified", what, sum(i in known for i in ids), len(ids))
        report["seconds"] = round(time.perf_counter() - start, 2)
        report["ms_per_row"] = round(1000 * report["seconds"] / len(todo), 3)
    if path:
        _write_cache({i: known[i] for i in table.loc[missing, "id"]}, path)
    answers = table.loc[missing, "id"].map(lambda i: known[i])
    table.loc[missing, "language"] = [a[0] for a in answers]
    margins = np.array([a[1] for a in answers], dtype=float)
    report["unidentified"] = int(sum(a[0] is None for a in answers))
    report["low_margin"] = int((margins < LOW_MARGIN).sum())  # close calls between two grammars
    table["language_origin"] = origin
    counts = table.loc[missing, "language"].astype(str).value_counts().sort_index()
    report["languages_identified"] = {k: int(v) for k, v in counts.items()}
    return table, report


def release_subsets(test: pd.DataFrame, paper: dict | None, task: str) -> tuple[pd.DataFrame, dict]:
    """Test subsets the release lets us rebuild, and a note for each the paper has that it does not.

    paper: {"kind": binary | family | fine_grained, "seen_languages": [...], "seen_domains": [...]}
    (the task's build entry); without a kind nothing is added and nothing is claimed."""
    notes: dict = {"inferred": {}, "not_recoverable": {}, "given": []}
    if not paper or not paper.get("kind"):
        return test, notes
    kind = paper["kind"]
    if kind not in PAPER_SUBSETS:
        raise AicdError(f"task {task}: kind must be one of {sorted(PAPER_SUBSETS)}, got {kind!r}")
    if "subset" in test.columns and test["subset"].notna().all() and len(test):
        notes["given"] = ["subset"]
        return test, notes
    test = test.copy()
    if kind == "binary":
        seen = paper.get("seen_languages", ["Python", "Java", "C++"])
        bad = [x for x in seen if x not in LANGUAGES]
        if bad:
            raise AicdError(f"task {task}: seen_languages: unknown {bad}; use names from {list(LANGUAGES)}")
        lang_seen = test["language"].isin(seen)
        known_lang = test["language"].notna()
        has_domain = test["domain"].notna().all() if "domain" in test.columns and len(test) else False
        if has_domain:
            dom_seen = test["domain"].isin(paper.get("seen_domains", ["algorithmic"]))
            names = np.select([lang_seen & dom_seen, lang_seen, dom_seen],
                              ["seen_language_seen_domain", "seen_language_unseen_domain",
                               "unseen_language_seen_domain"], "unseen_language_unseen_domain")
        else:
            names = np.where(lang_seen, "seen_language", "unseen_language")
            notes["not_recoverable"]["domain"] = not_recoverable("domain")
        test["subset"] = np.where(known_lang, names, None)
        identified = test.get("language_origin", pd.Series("given", index=test.index)).eq("identified")
        if identified.any():
            notes["inferred"]["subset"] = (
                f"seen/unseen language from the identified language of {int(identified.sum())} of {len(test)} "
                f"test rows (aicd.normalize.langid); seen languages: {', '.join(seen)}")
            notes["inferred"]["language"] = "aicd.normalize.langid (tree-sitter parse quality + lexical cues)"
    elif kind == "family":
        notes["not_recoverable"]["generator"] = not_recoverable("generator")
    else:
        notes["not_recoverable"]["source"] = not_recoverable("source")
    return test, notes


def subset_summary(test: pd.DataFrame) -> dict:
    """Per test subset: rows, rows per class, and the one class when only one occurs."""
    if "subset" not in test.columns or test["subset"].isna().all():
        return {}
    out = {}
    for name, rows in test.groupby(test["subset"].astype(object).where(test["subset"].notna(), "(none)")):
        classes = rows["target"].astype(str).value_counts().sort_index()
        out[str(name)] = {"rows": int(len(rows)), "target": {k: int(v) for k, v in classes.items()},
                          "one_class": str(classes.index[0]) if len(classes) == 1 else None}
    return out

