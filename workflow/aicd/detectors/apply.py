"""Applying a fitted model to code files (`aicd detect`): collect the files, read them, name
their language, predict, and count what was skipped.

A folder contributes the files with a code extension of the nine languages (others are counted
as `not_code_extension`; folders that cannot be listed as `unreadable_folder`; symbolic links to
folders are not followed, counted as `symlinked_folder`; a symbolic link to a file outside the
folders given is not read, counted as `symlink_outside_roots`; hidden folders are not
searched); a file named on the command line is always read. A file reached twice (named twice, or
by a link inside the folders given) is read once: the second path is counted as
`duplicate_file`; a file whose code is the same as an earlier file's is counted as
`duplicate_code` (each names the first). Language: --language,
else the extension, else aicd.normalize.langid's identify_or_unknown. Files that cannot be read,
hold binary content (NUL bytes), are over 10 MiB, are not UTF-8 or only whitespace are skipped,
counted per reason (read by aicd.sources.gather, as the sources stage reads files). The text is
decoded byte for byte (no newline translation), so a file holds exactly the code a task row held.

Some files are read but not labelled, each with its reason (`status`): `other_language` (the
extension names a language outside the nine, such as .kt or .rb), `unknown_language` (no
extension of the nine, and language ID finds the text is none of them: prose, configuration,
Kotlin, ...), `not_code` (a file with an extension of the nine that is text, not code: its
grammar parses little of it and it has almost none of code's symbols). Every file skipped or not
labelled is a row of FileTable.unscored, so the output can list every input file.

Every label made is flagged where it is not to be trusted as the benchmark's numbers are:
`outside_benchmark` says `outside_nine_languages` for code its extension's grammar parses under
80% of, else the first of Table 3's line bounds the file fails (lines of code, line lengths,
alphanumeric fraction: the rows a task holds passed them all); `size_out_of_range` names a file
longer than any benchmark row can be (Table 3's bounds); `language_fit` is the share of the file
its language's grammar parses (language ID's own measure, aicd.normalize.langid: every benchmark
row parses whole); `language_unseen` marks a language the model saw no training row of;
`ood_score` (models on a feature set) is the distance to the training rows, about 1 in
distribution (aicd.detectors.novelty), and from 2 on it flags the file too; `in_distribution` is
False where any of these flags is set. Long reads say how far they are on stderr (`progress`)."""

from __future__ import annotations

import os
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from ..common.errors import AicdError
from ..common.words import counted
from ..data.schema import canonical_language
from ..data.scores import declare
from ..normalize.langid import FIT_MIN


def _extension_map() -> dict[str, str]:
    from ..sources.gather import EXTENSIONS

    return {ext: lang for lang, exts in EXTENSIONS.items() for ext in exts}


UNKNOWN = "unknown"  # the language of a file that is none of the nine


@dataclass
class FileTable:
    rows: pd.DataFrame                 # path, code, language, language_from, other_language, order
    skipped: Counter = field(default_factory=Counter)
    examples: dict = field(default_factory=dict)   # reason -> first path skipped for it
    unscored: list = field(default_factory=list)   # one record per file skipped or not labelled

    def skip(self, reason: str, path, **record) -> None:
        self.skipped[reason] += 1
        self.examples.setdefault(reason, str(path))
        self.unscored.append({"path": str(path), "status": reason, "order": len(self.unscored) + 10**9, **record})

    def skip_summary(self) -> str:
        if not self.skipped:
            return ""
        parts = ", ".join(f"{n} {reason} (e.g. {self.examples[reason]})" for reason, n in self.skipped.most_common())
        return f"skipped {counted(sum(self.skipped.values()), 'file')}: {parts}"


def _inside(path: Path, roots: list[Path]) -> bool:
    return any(path == root or root in path.parents for root in roots)


def collect_paths(paths: list[str], table: FileTable) -> list[Path]:
    extensions = _extension_map()
    found: list[Path] = []
    roots = [Path(p).resolve() for p in paths if Path(p).is_dir()]
    for given in paths:
        p = Path(given)
        if p.is_dir():
            # a folder that cannot be listed is counted, not passed over (os.walk's default)
            for root, dirs, files in os.walk(p, onerror=lambda err: table.skip("unreadable_folder", err.filename)):
                dirs[:] = sorted(d for d in dirs if not d.startswith("."))
                for d in dirs:
                    if os.path.islink(os.path.join(root, d)):
                        table.skip("symlinked_folder", Path(root) / d)   # os.walk does not follow it (loops)
                for name in sorted(files):
                    f = Path(root) / name
                    if f.is_symlink() and not _inside(f.resolve(), roots):
                        table.skip("symlink_outside_roots", f)   # e.g. a link to /etc/shadow
                    elif f.suffix.lower() in extensions:
                        found.append(f)
                    elif f.suffix.lower() in OTHER_LANGUAGES:
                        table.skip("other_language", f, language=UNKNOWN,
                                   other_language=OTHER_LANGUAGES[f.suffix.lower()], language_from="extension")
                    else:
                        table.skip("not_code_extension", f)
        elif p.exists():
            found.append(p)
        else:
            raise AicdError(f"{given}: no such file or folder")
    return once_each(found, table)


def once_each(found: list[Path], table: FileTable) -> list[Path]:
    """The paths with each file once (by its resolved path); a second path to the same file is a
    counted `duplicate_file` naming the first."""
    first: dict[str, Path] = {}
    for path in found:
        real = os.path.realpath(path)
        if real in first:
            table.skip("duplicate_file", path, why=f"the same file as {first[real]}, given again")
        else:
            first[real] = path
    return list(first.values())


def code_digest(code: str) -> bytes:
    """What two files with the same code share (their text exactly, as read)."""
    import hashlib

    return hashlib.sha256(code.encode("utf-8", "surrogatepass")).digest()


def read_code(path: Path) -> tuple[str | None, str | None]:
    """(text, None) or (None, skip reason): the sources stage's own reader, so a file is read,
    refused (unreadable, too_large, binary, invalid_utf8, empty) and decoded exactly as there."""
    from ..sources.gather import read_file

    _, text, reason = read_file(str(path))
    return text, reason


# Extensions of languages outside the nine: such a file is flagged, whatever language ID guesses.
OTHER_LANGUAGES = {".kt": "Kotlin", ".kts": "Kotlin", ".rb": "Ruby", ".ts": "TypeScript", ".tsx": "TypeScript",
                   ".swift": "Swift", ".scala": "Scala", ".dart": "Dart", ".lua": "Lua", ".pl": "Perl", ".r": "R",
                   ".sh": "shell", ".bash": "shell", ".sql": "SQL", ".hs": "Haskell", ".ex": "Elixir",
                   ".exs": "Elixir", ".clj": "Clojure", ".jl": "Julia", ".fs": "F#", ".vb": "Visual Basic",
                   ".groovy": "Groovy", ".m": "Objective-C or MATLAB", ".erl": "Erlang", ".ml": "OCaml"}
LONG_READ = 2**18     # characters from which `aicd detect` says what it is doing
PROSE_SYMBOLS = 0.02   # code's symbols per non-blank character below which text reads as prose
CODE_SYMBOLS = frozenset("{}()[];=<>+-*/&|!:#$@%^~\\")


class Progress:
    """One line on stderr every `every` seconds while files are read and labelled (a 2 MB file,
    or thousands of files, take seconds); nothing for a short run."""

    def __init__(self, say=None, every: float = 3.0):
        import time

        self.say, self.every, self.clock = say, every, time.perf_counter
        self.started = self.last = self.clock()

    def __call__(self, text: str, force: bool = False) -> None:
        now = self.clock()
        if self.say and (force or now - self.last >= self.every):
            self.say(f"{text} ({now - self.started:.1f} s)")
            self.last = now


def symbol_density(code: str) -> float:
    dense = "".join(code.split())
    return sum(ch in CODE_SYMBOLS for ch in dense) / max(1, len(dense))


def read_files(paths: list[str], language: str | None = None, progress: Progress | None = None) -> FileTable:
    table = FileTable(pd.DataFrame())
    given = None
    if language is not None:
        given = canonical_language(language)
        if given is None:
            raise AicdError(f"--language {language!r} is not one of the nine languages")
    extensions = _extension_map()
    records = []
    found = collect_paths(paths, table)
    read_bytes, seen = 0, {}
    for n, path in enumerate(found, 1):
        if progress:
            progress(f"aicd detect: read {n - 1:,} of {len(found):,} files ({read_bytes / 2**20:.1f} MB)")
        code, reason = read_code(path)
        suffix = path.suffix.lower()
        if reason:
            table.skip(reason, path, language=extensions.get(suffix, ""), order=n)
            continue
        same = seen.setdefault(code_digest(code), path)
        if same is not path:
            table.skip("duplicate_code", path, language=extensions.get(suffix, ""), order=n,
                       why=f"the same code as {same}")
            continue
        other = OTHER_LANGUAGES.get(suffix, "")
        if given:
            lang, origin = given, "given"
        elif suffix in extensions:
            lang, origin = extensions[suffix], "extension"
        elif other:
            table.skip("other_language", path, language=UNKNOWN, language_from="extension", other_language=other,
                       why=f"its extension {suffix} names {other}, a language outside the nine", order=n)
            continue
        else:
            from ..normalize.langid import identify_or_unknown

            found_language = identify_or_unknown(code)
            if found_language.language is None:
                table.skip("unknown_language", path, language=UNKNOWN, language_from="langid",
                           other_language=found_language.outside, why=found_language.why, order=n)
                continue
            lang, origin = found_language.language, "langid"
        fit, flag = language_flag(code, lang, other)
        if flag == "not_code":  # a label of prose means nothing
            table.skip("not_code", path, language=lang, language_from=origin, order=n,
                       why=f"text, not code: {lang}'s grammar parses {fit:.0%} of it and it has almost none of code's "
                           "symbols")
            continue
        read_bytes += len(code)
        records.append((str(path), code, lang, origin, other, fit, flag, n))
    table.rows = pd.DataFrame(records, columns=["path", "code", "language", "language_from", "other_language",
                                                "language_fit", "language_flag", "order"])
    return table


def language_flag(code: str, language: str, other: str = "") -> tuple[float, str]:
    """(language_fit, flag): the share of the code its language's grammar parses, and
    not_code / outside_nine_languages / "" (aicd.normalize.langid's parse quality)."""
    from ..normalize.langid import parse_quality

    fit = parse_quality(code, language) if language else 0.0
    if fit < FIT_MIN and symbol_density(code) < PROSE_SYMBOLS:
        return fit, "not_code"
    if other or fit < FIT_MIN:
        return fit, "outside_nine_languages"
    return fit, ""


def outside_table3(code: str) -> str:
    """The first of Table 3's line filters the code fails ("" when it passes them all)."""
    from ..normalize.filters import TABLE3, check_lines

    failed, _ = check_lines(code, TABLE3)
    return failed or ""


UNLIKE_TRAINING = 2.0  # ood_score (aicd.detectors.novelty) from which a file is unlike the training rows


def size_flag(code: str) -> str:
    """Why a file is longer than any benchmark row can be ("" when it is not): Table 3 keeps rows
    of at most its lines-of-code bound with lines of at most its line-length bound."""
    from ..normalize.filters import TABLE3

    most = TABLE3["lines_of_code"][1] * TABLE3["max_line_length"][1]
    if len(code) <= most:
        return ""
    return (f"{len(code):,} characters, over the {most:,} a benchmark row can hold ({TABLE3['lines_of_code'][1]} "
            f"lines of code of at most {TABLE3['max_line_length'][1]} characters: Table 3)")


def detect(model, table: FileTable, progress: Progress | None = None) -> pd.DataFrame:
    """path, language, language_from, pred, score_<class>..., language_fit, outside_benchmark,
    size_out_of_range, language_unseen, in_distribution for the rows read
    (read_files has set aside what it does not label); what the score columns hold is declared
    (aicd.data.scores), as in the workflow's predictions files."""
    rows = table.rows
    if rows.empty:
        return pd.DataFrame(columns=["path", "language", "language_from", "pred", "order"])
    size = int(rows["code"].str.len().sum())
    big = progress is not None and (size > LONG_READ or len(rows) > 1000)  # seconds of work: say so
    if big:
        progress(f"aicd detect: labelling {counted(len(rows), 'file')} ({size / 2**20:.1f} MB)", force=True)
    predictions = model.predict_rows(rows[["code", "language"]])
    if big:
        progress(f"aicd detect: labelled {counted(len(rows), 'file')}; checking their languages", force=True)
    out = pd.concat([rows[["path", "language", "language_from"]].reset_index(drop=True),
                     predictions.reset_index(drop=True)], axis=1)
    out["language_fit"] = rows["language_fit"].round(3).to_numpy()
    out["outside_benchmark"] = [flag or outside_table3(c) for flag, c in zip(rows["language_flag"], rows["code"])]
    out["size_out_of_range"] = [size_flag(c) for c in rows["code"]]
    out["other_language"] = rows["other_language"].to_numpy()
    seen = set(getattr(model, "train_languages", None) or ())
    out["language_unseen"] = [bool(seen) and lang not in seen for lang in rows["language"]]
    unlike = out["ood_score"] >= UNLIKE_TRAINING if "ood_score" in out.columns else False
    out["in_distribution"] = ~((out["outside_benchmark"] != "") | (out["size_out_of_range"] != "")
                               | out["language_unseen"] | unlike)
    out["order"] = rows["order"].to_numpy()
    scored = any(str(c).startswith("score_") for c in out.columns)
    return declare(out, getattr(model.detector, "score_kind", "probability") if scored else None)


def flag_summary(result: pd.DataFrame, model) -> str:
    """One line: how many labels are outside what the benchmark measured (in_distribution false),
    and why."""
    outside = result["outside_benchmark"][result["outside_benchmark"] != ""]
    unseen = result["language"][result["language_unseen"]]
    unlike = result["ood_score"] >= UNLIKE_TRAINING if "ood_score" in result.columns else \
        pd.Series(False, index=result.index)
    big = result["size_out_of_range"] != "" if "size_out_of_range" in result.columns else \
        pd.Series(False, index=result.index)
    flagged = int(((result["outside_benchmark"] != "") | result["language_unseen"] | unlike | big).sum())
    parts = []
    if big.any():
        parts.append(f"{int(big.sum())} longer than any benchmark row (e.g. {result['path'][big].iloc[0]})")
    if unlike.any():
        parts.append(f"{int(unlike.sum())} unlike the training rows (ood_score >= {UNLIKE_TRAINING:g})")
    not_code = result["outside_benchmark"] == "not_code"
    if not_code.any():
        parts.append(f"{int(not_code.sum())} not code (e.g. {result['path'][not_code].iloc[0]})")
    other = result["outside_benchmark"] == "outside_nine_languages"
    if other.any():
        named = result["other_language"][other] if "other_language" in result.columns else pd.Series([], dtype=str)
        by_ext = ", ".join(f"{k}: {n}" for k, n in named[named != ""].value_counts().items())
        rest = int(other.sum()) - int((named != "").sum())
        why = ([f"by extension: {by_ext}"] if by_ext else []) + \
            ([f"{rest} that their language's grammar parses under {FIT_MIN:.0%} of"] if rest else [])
        parts.append(f"{int(other.sum())} outside the nine languages ({'; '.join(why)})")
    outside = outside[~outside.isin(("not_code", "outside_nine_languages"))]
    if len(outside):
        why = ", ".join(f"{k}: {n}" for k, n in outside.value_counts().items())
        parts.append(f"{len(outside)} outside the benchmark's Table 3 bounds ({why})")
    if len(unseen):
        why = ", ".join(f"{k}: {n}" for k, n in unseen.value_counts().items())
        parts.append(f"{len(unseen)} in a language the model saw no training row of ({why})")
    if not getattr(model, "train_languages", None):
        parts.append("the model records no training languages (fitted by an older version): languages not checked")
    return f"{counted(len(result), 'file')} labelled, {flagged} outside what the benchmark measured" + \
        (f": {'; '.join(parts)}" if parts else "")
