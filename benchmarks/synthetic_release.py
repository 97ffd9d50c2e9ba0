"""A synthetic AICD Bench at a fraction F of the paper's size, resampled from real code.

Real code: the SemEval-2026 Task 13 trial rows (human and 60 generators; Python, C++, Java),
the CodeAid interview answers (human and GPT, many languages) and the demo's pinned human
code in all nine languages. Every row is a resampled real program made distinct the way real
data is: identifiers renamed consistently (a program's rarer names, in its own naming style,
from a vocabulary that keeps growing with the rows), numbers changed and comment words
replaced. So the TF-IDF vocabulary, the MinHash shingles and the feature matrices grow with
the rows as they would on real data. Nothing about a program's class is changed.

Two outputs, both seeded:

- `write_release(F, out)`: T1-T3 in the release's format (parquet, `code` and an integer
  `label`, the label ids of config/config.yaml) with F x Table 1's rows per task and split,
  and the paper's label, language and generator mixes (below);
- `write_sources(F, out)`: F x 2.05M rows as the full build's source tables (codenet,
  starcoderdata, the_heap, swallowcode, droidcollection), for the dataset stage.

Mixes (the release publishes none; ours follow Table 1 and Section 4): T1 trains on Python,
Java and C++ only, half human, and tests 40% on the other languages; T2 is 40% human and 60%
the 11 families, each family in proportion to the square root of its rows in the trial data;
T3 is 40% human, 30% machine, 15% hybrid (a human program's first half, a machine program's
second half, same language) and 15% adversarial (a machine program without comments and with
every rename applied). Machine code exists only where the real data has it (Python, C++,
Java, and GPT answers in a few more languages)."""

from __future__ import annotations

import re
import sys
from collections import Counter
from pathlib import Path

import numpy as np
import pandas as pd

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "workflow"))
SHARED = REPO.parent / "shared" / "data"
TRIAL = SHARED / "semeval2026-task13-trial" / "task_a_trial_subset.parquet"
CODEAID = SHARED / "codeaid-interview-answers" / "codeaid_answers.parquet"

# Table 1 (train, validation) and the release's test sizes (config/config.yaml's revision).
TABLE1 = {
    "T1": {"train": 500_000, "validation": 100_000, "test": 1_108_207},
    "T2": {"train": 500_000, "validation": 100_000, "test": 507_874},
    "T3": {"train": 900_000, "validation": 200_000, "test": 1_000_000},
}
DATASET_ROWS = 2_050_000  # Table 2: AICD Bench's samples
SEEN = ("Python", "Java", "C++")
T1_TEST_LANGUAGES = ("Python", "Java", "C++", "C", "Go", "PHP", "C#", "JavaScript")
T2_IDS = ("human", "DeepSeek-AI", "Qwen", "01-ai", "BigCode", "Gemma", "Phi", "Meta-Llama", "IBM-Granite",
          "Mistral", "OpenAI", "Gemini")
T3_IDS = ("human", "machine", "hybrid", "adversarial")

IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
NUMBER = re.compile(r"(?<![\w.])\d+(?![\w.])")
HASH_COMMENT = re.compile(r"(?m)#(?![ \t]*(?:include|define|if|ifdef|ifndef|endif|else|elif|pragma|undef)\b)(.*)$")
SLASH_COMMENT = re.compile(r"(?m)(?<!:)//(.*)$")
WORD = re.compile(r"[A-Za-z]{3,}")
SYLLABLES = [c + v for c in "bcdfghklmnprstvz" for v in "aeiou"] + ["qu", "th", "sh", "ch", "st"]


def base_pool(seed: int = 0, per_language: int = 200) -> pd.DataFrame:
    """Real rows: code, language, label (human | machine), family (None for human), domain."""
    from aicd.data.families import family_of, is_human
    from aicd.data.schema import canonical_language
    from aicd.sources import pinned
    from aicd.sources.gather import gather

    trial = pd.read_parquet(TRIAL)
    human = trial["generator"].map(is_human)
    parts = [pd.DataFrame({"code": trial["code"], "language": trial["language"].map(canonical_language),
                           "label": np.where(human, "human", "machine"),
                           "family": [None if h else family_of(g) for h, g in zip(human, trial["generator"])],
                           "domain": "algorithmic"})]
    if CODEAID.is_file():
        aid = pd.read_parquet(CODEAID)
        aid = aid.assign(language=aid["language"].map(canonical_language)).dropna(subset=["language"])
        parts.append(pd.DataFrame({"code": aid["code"], "language": aid["language"], "label": aid["label"],
                                   "family": [None if lab == "human" else family_of(g)
                                              for lab, g in zip(aid["label"], aid["generator"])],
                                   "domain": "algorithmic"}))
    demo = pinned_roots()
    if all(pinned.verified_path(name, entry).is_file() for name, entry in pinned.pins_for(demo).items()):
        rows, _ = gather({"roots": demo, "per_language": per_language, "pinned_only": True}, seed)
        parts.append(pd.DataFrame({"code": rows["code"], "language": rows["language"], "label": "human",
                                   "family": None, "domain": "general"}))
    else:
        print(f"note: the pinned inputs are not all in {pinned.cache_dir()} (make pinned-inputs): human code in "
              "only the trial's and CodeAid's languages", file=sys.stderr)
    pool = pd.concat(parts, ignore_index=True)
    pool = pool[pool["code"].str.strip().astype(bool) & pool["language"].notna()]
    return pool[(pool["label"] == "human") | pool["family"].notna()].reset_index(drop=True)


def pinned_roots() -> dict:
    import yaml

    demo = yaml.safe_load((REPO / "config" / "demo.yaml").read_text())
    return demo["sources"]["local_code"]["gather"]["roots"]


class Mutator:
    """Makes a copy of a program distinct: its rarer identifiers renamed (consistently within
    the copy), some numbers changed and comment words replaced. Names that occur in at least
    `protect_share` of a language's base programs (keywords, the standard library, `self`,
    `main`) are kept, so the code still reads as its language."""

    def __init__(self, pool: pd.DataFrame, protect_share: float = 0.02, rename: float = 0.7):
        self.rename = rename
        self.protected: dict[str, set[str]] = {}
        for language, codes in pool.groupby("language")["code"]:
            counts = Counter(name for code in codes for name in set(IDENT.findall(code)))
            floor = max(2, protect_share * len(codes))
            self.protected[language] = {name for name, n in counts.items() if n >= floor}

    @staticmethod
    def fresh_name(old: str, rng: np.random.Generator) -> str:
        def word() -> str:
            return "".join(SYLLABLES[i] for i in rng.integers(0, len(SYLLABLES), size=int(rng.integers(1, 4))))

        if len(old) == 1:
            return "abcdefghijklmnopqrstuvwxyz"[int(rng.integers(26))] + (str(int(rng.integers(10))) if rng.random() < 0.3 else "")
        parts = [word() for _ in range(int(rng.integers(1, 4)))]
        if old.isupper():
            return "_".join(parts).upper()
        if "_" in old.strip("_"):
            return "_".join(parts)
        if old[0].isupper():
            return "".join(p.capitalize() for p in parts)
        return parts[0] + "".join(p.capitalize() for p in parts[1:])

    def __call__(self, code: str, language: str, rng: np.random.Generator, strip_comments: bool = False,
                 rename: float | None = None) -> str:
        keep = self.protected.get(language, set())
        share = self.rename if rename is None else rename
        names = sorted(set(IDENT.findall(code)) - keep)
        mapping = {n: self.fresh_name(n, rng) for n, r in zip(names, rng.random(len(names))) if r < share}
        comment = HASH_COMMENT if language in ("Python", "PHP") else None
        slash = SLASH_COMMENT if language != "Python" else None

        def new_comment(match: re.Match) -> str:
            if strip_comments:
                return ""
            text = WORD.sub(lambda w: w.group(0) if rng.random() < 0.5 else self.fresh_name(w.group(0).lower(), rng),
                            match.group(1))
            return match.group(0)[: match.start(1) - match.start(0)] + text

        for pattern in (comment, slash):
            if pattern is not None:
                code = pattern.sub(new_comment, code)
        code = IDENT.sub(lambda m: mapping.get(m.group(0), m.group(0)), code)
        return NUMBER.sub(lambda m: str(int(rng.integers(0, 10 ** min(len(m.group(0)), 18)))) if rng.random() < 0.3
                          else m.group(0), code)


def _draw(rows: pd.DataFrame, n: int, rng: np.random.Generator) -> pd.DataFrame:
    if n <= 0 or rows.empty:
        return rows.iloc[0:0]
    return rows.iloc[rng.integers(0, len(rows), size=n)]


def _counts(total: int, shares: dict) -> dict:
    """Integer counts per key summing to total, by largest remainder."""
    keys = list(shares)
    weights = np.array([shares[k] for k in keys], dtype=float)
    raw = total * weights / weights.sum()
    counts = np.floor(raw).astype(int)
    for i in np.argsort(raw - counts)[::-1][: total - counts.sum()]:
        counts[i] += 1
    return dict(zip(keys, counts.tolist()))


def _code_rows(picked: pd.DataFrame, mutate: Mutator, rng: np.random.Generator, **how) -> list[str]:
    return [mutate(code, language, rng, **how) for code, language in zip(picked["code"], picked["language"])]


def task_split(task: str, n: int, pool: pd.DataFrame, mutate: Mutator, rng: np.random.Generator,
               split: str) -> pd.DataFrame:
    """n rows of one release split: `code` and the integer `label` of config/config.yaml."""
    human, machine = pool[pool["label"] == "human"], pool[pool["label"] == "machine"]
    codes, labels = [], []
    if task == "T1":
        languages = SEEN if split != "test" else T1_TEST_LANGUAGES
        seen_share = 1.0 if split != "test" else 0.6
        for seen, share in ((True, seen_share), (False, 1 - seen_share)):
            langs = [lang for lang in languages if (lang in SEEN) == seen]
            for label, rows in ((0, human), (1, machine)):
                rows = rows[rows["language"].isin(langs) & ((rows["domain"] == "algorithmic") | (split == "test"))]
                if rows.empty:
                    rows = (human if label == 0 else machine)[lambda r: r["language"].isin(SEEN)]
                picked = _draw(rows, round(n * share / 2), rng)
                codes += _code_rows(picked, mutate, rng)
                labels += [label] * len(picked)
    elif task == "T2":
        family_rows = {f: machine[machine["family"] == f] for f in T2_IDS[1:]}
        shares = {"human": 0.4 / 0.6 * sum(np.sqrt(len(r)) for r in family_rows.values())}
        shares.update({f: np.sqrt(len(r)) for f, r in family_rows.items() if len(r)})
        for name, count in _counts(n, shares).items():
            picked = _draw(human if name == "human" else family_rows[name], count, rng)
            codes += _code_rows(picked, mutate, rng)
            labels += [T2_IDS.index(name)] * len(picked)
    else:
        counts = _counts(n, {"human": 0.4, "machine": 0.3, "hybrid": 0.15, "adversarial": 0.15})
        for name in ("human", "machine", "adversarial"):
            picked = _draw(human if name == "human" else machine, counts[name], rng)
            codes += _code_rows(picked, mutate, rng, **({"strip_comments": True, "rename": 1.0}
                                                        if name == "adversarial" else {}))
            labels += [T3_IDS.index(name)] * len(picked)
        both = sorted(set(human["language"]) & set(machine["language"]))
        by_language = {lang: (human[human["language"] == lang], machine[machine["language"] == lang]) for lang in both}
        for lang in rng.choice(both, size=counts["hybrid"]):
            h, m = by_language[lang]
            first, second = (rows["code"].iat[int(rng.integers(len(rows)))].splitlines() for rows in (h, m))
            spliced = "\n".join(first[: max(1, len(first) // 2)] + second[len(second) // 2:]) + "\n"
            codes.append(mutate(spliced, lang, rng))
            labels.append(T3_IDS.index("hybrid"))
    order = rng.permutation(len(codes))
    return pd.DataFrame({"code": np.asarray(codes, dtype=object)[order], "label": np.asarray(labels)[order]})


def write_release(fraction: float, out: Path, seed: int = 0, pool: pd.DataFrame | None = None) -> dict:
    """{task: {split: path}} of the written release; rows per split = round(F x Table 1), at least 50."""
    pool = base_pool(seed) if pool is None else pool
    mutate = Mutator(pool)
    files: dict = {}
    for t, (task, splits) in enumerate(TABLE1.items()):
        for s, (split, full) in enumerate(splits.items()):
            rng = np.random.default_rng([seed, t, s])
            table = task_split(task, max(50, round(fraction * full)), pool, mutate, rng, split)
            path = out / task / f"{split}.parquet"
            path.parent.mkdir(parents=True, exist_ok=True)
            table.to_parquet(path, index=False)
            files.setdefault(task, {})[split] = str(path)
    return files


# The full build's sources and their share of the 2.05M rows (Section 4: 50K The Heap, 100K
# SwallowCode; the rest human and machine code as in DroidCollection and the new generations).
SOURCE_SHARES = {"codenet": 0.25, "starcoderdata": 0.2, "the_heap": 0.025, "swallowcode": 0.05,
                 "droidcollection": 0.475}


def write_sources(fraction: float, out: Path, seed: int = 0, pool: pd.DataFrame | None = None) -> dict:
    """{source: path} of F x 2.05M rows in the full build's source tables: code, language,
    label, generator, domain (what each real source's config maps its columns to)."""
    from aicd.data.families import FAMILY_RULES

    pool = base_pool(seed) if pool is None else pool
    mutate = Mutator(pool)
    human, machine = pool[pool["label"] == "human"], pool[pool["label"] == "machine"]
    # one generator name per family that aicd.data.families maps back to it, two per family so
    # that T2's held-out generators exist
    generators = {family: [f"{rule}-synthetic-{k}" for k in (1, 2)]
                  for family in dict.fromkeys(f for _, f in FAMILY_RULES)
                  for rule in [next(r for r, f2 in FAMILY_RULES if f2 == family)]}
    files = {}
    total = max(200, round(fraction * DATASET_ROWS))
    for k, (source, n) in enumerate(_counts(total, SOURCE_SHARES).items()):
        rng = np.random.default_rng([seed, 100 + k])
        if source == "droidcollection":
            labels = rng.choice(["human", "machine", "hybrid", "adversarial"], size=n, p=[0.3, 0.5, 0.1, 0.1])
            picked = _draw(machine, n, rng)
            human_picked = _draw(human, n, rng)
            codes = [mutate(h if lab == "human" else m, hl if lab == "human" else ml, rng,
                            **({"strip_comments": True, "rename": 1.0} if lab == "adversarial" else {}))
                     for lab, h, hl, m, ml in zip(labels, human_picked["code"], human_picked["language"],
                                                   picked["code"], picked["language"])]
            table = pd.DataFrame({
                "code": codes, "label": labels,
                "language": np.where(labels == "human", human_picked["language"], picked["language"]),
                "generator": ["human" if lab == "human" else generators[fam][int(rng.integers(2))]
                              for lab, fam in zip(labels, picked["family"])],
                "domain": np.where(rng.random(n) < 0.5, "algorithmic", "general"),
            })
        else:
            label = "hybrid" if source == "swallowcode" else "human"
            rows = human[human["language"] == "Python"] if source == "swallowcode" else human
            picked = _draw(rows, n, rng)
            table = pd.DataFrame({"code": _code_rows(picked, mutate, rng), "label": label,
                                  "language": picked["language"].to_numpy(),
                                  "generator": "Llama-3.3-70B-Instruct" if label == "hybrid" else "human",
                                  "domain": "algorithmic" if source == "codenet" else "general"})
        path = out / f"{source}.parquet"
        path.parent.mkdir(parents=True, exist_ok=True)
        table.to_parquet(path, index=False)
        files[source] = str(path)
    return files
