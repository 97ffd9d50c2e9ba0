"""Language identification for rows that arrive without a language.

Two signals, combined per candidate language:
- lexical cues: weighted regular expressions for constructs that mark one language
  (`#include <iostream>`, `fn main`, `$var`, `:=`, `System.out`, ...), summed and squashed;
- parse quality: the share of the text that the language's tree-sitter grammar parses
  without ERROR nodes (most code is valid in only one of the nine grammars, and C code is
  valid C++, which is why the cues decide between close relatives).

Accuracy is measured, not assumed: tests/unit/normalize/test_langid.py runs it on the labelled trial
rows and on real code gathered from the machine (target >= 98%, per-language confusion in
the report).

identify_language always names one of the nine (the dataset stage's rows are code of the nine).
Code handed to `aicd detect` may be anything: identify_or_unknown answers None ("unknown")
for text that none of the nine grammars parses well (prose, configuration), and for code whose
cues are those of a language outside the nine (OUTSIDE_CUES: Kotlin, Swift, Dart, TypeScript,
Ruby, SQL, CSS/HTML, Dockerfile, shell, Perl) more than of the language the grammars chose and
that the chosen grammar does not parse whole. Measured in tests/unit/normalize/test_langid.py on the
CodeAid answers in seven languages outside the nine (every one unknown), on prose, and on the
nine (no answer lost that identify_language got right: benchmarks/notes/calibration.md)."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from functools import cache

import tree_sitter

from ..codetools.codetext import strip_comments
from ..codetools.treesitter import parser_for
from ..data.schema import LANGUAGES

M = re.MULTILINE
# language -> [(pattern, weight)]; each pattern counts once per match, up to 3 matches.
CUES: dict[str, list[tuple[re.Pattern, float]]] = {
    "Python": [
        (re.compile(r"^\s*def \w+\s*\(.*\)\s*(->\s*[^:]+)?:\s*(#.*)?$", M), 3),
        (re.compile(r"^\s*(from [\w.]+ )?import [\w.]+(\s+as \w+)?\s*$", M), 1.5),
        (re.compile(r"^\s*(if|elif|while|for|with|try|except|else|class)\b[^{;]*:\s*(#.*)?$", M), 1.5),
        (re.compile(r"\bself\.\w+"), 1), (re.compile(r"\b(elif|None|True|False|lambda)\b"), 1),
        (re.compile(r"\bprint\("), 0.5), (re.compile(r"^\s*\"\"\"|^\s*'''", M), 1.5),
        (re.compile(r"\b(range|len|input)\(.*\)"), 0.5),
    ],
    "Java": [
        (re.compile(r"\bSystem\.(out|in|err)\b"), 3), (re.compile(r"^\s*import java\w*\.", M), 3),
        (re.compile(r"\bpublic static void main\s*\(\s*String"), 3),
        (re.compile(r"\b(public|private|protected)\s+(static\s+)?(final\s+)?[\w<>\[\],]+\s+\w+\s*[(=;]"), 1),
        (re.compile(r"\bString\[\]"), 1.5), (re.compile(r"@Override\b"), 2),
        (re.compile(r"\b(extends|implements|throws)\s+\w+"), 1.5), (re.compile(r"^\s*package [\w.]+;", M), 3),
        (re.compile(r"\b(ArrayList|HashMap|Scanner|BufferedReader|Integer\.parseInt)\b"), 1.5),
        (re.compile(r"\bfinal\s+\w+"), 0.5), (re.compile(r"\bboolean\b"), 1),
        (re.compile(r"^\s*(public|private|protected)\s+(static\s+)?[\w<>\[\]]+\s+\w+\s*\(", M), 1.5),
        (re.compile(r"\bString\b"), 1), (re.compile(r"\.(length|size|equals|charAt)\(\)"), 1.5),
        (re.compile(r"#include|\bstd::|\busing namespace\b|\bConsole\.|^\s*using System", M), -4),
        (re.compile(r"=>|\bconstructor\s*\(|\bthis\.\w+\s*=\s*[^;\n]*$|\bout\s+var\b", M), -2),
        (re.compile(r"^#\s*(ifdef|ifndef|endif|define|include|pragma|undef|if defined)\b", M), -3),
        (re.compile(r"\b(string|bool|object)\s+\w+\s*[,)=;]|\)\s*\n\s*\{\s*\n|\benum\s+\w+\s*:\s*\w+"), -2),
    ],
    "C#": [
        (re.compile(r"^\s*using System[\w.]*;", M), 3), (re.compile(r"\bConsole\.(Write|Read)"), 3),
        (re.compile(r"^\s*namespace [\w.]+", M), 2), (re.compile(r"\{\s*get;\s*(private\s+)?set;\s*\}"), 3),
        (re.compile(r"\b(public|private|internal|protected)\s+(override|virtual|readonly|async|sealed)\b"), 2),
        (re.compile(r"\bstring\b"), 1), (re.compile(r"\bforeach\s*\(\s*var\b"), 2),
        (re.compile(r"\b(var)\s+\w+\s*=\s*new\b"), 1), (re.compile(r"\binternal\b"), 1.5),
        (re.compile(r"\.Length\b|\.Count\b|\bList<|\bDictionary<"), 1), (re.compile(r"\bbool\b"), 0.5),
        (re.compile(r"\[(Test|Fact|Serializable|DllImport|Flags)\b"), 2), (re.compile(r"\bnameof\("), 2),
        (re.compile(r"#include|\bstd::|\bSystem\.out\b|^\s*import java|\bboolean\b", M), -4),
        (re.compile(r"\b(out|ref)\s+(var\s+)?\w+\s*[,)]"), 2), (re.compile(r"\bobject\b"), 1),
        (re.compile(r"\bis\s+(not\s+)?null\b|\busing\s*\(|\busing var\b|\b\w+\?\s+\w+\s*[;=,)]"), 2),
        (re.compile(r"^\s*(public|private|protected|internal|static)[^\n;{]*\)\s*\n\s*\{", M), 1.5),
        (re.compile(r"^#\s*(ifdef|ifndef|endif|define|include|pragma|undef|if defined)\b", M), -3),
        (re.compile(r"\b(string|bool|object)\s+\w+\s*[,)=;]|\benum\s+\w+\s*:\s*\w+"), 2),
        (re.compile(r"\busing namespace\b|\b(cout|cin|endl|printf|scanf|NULL)\b|\w->\w|\btemplate\s*<|\bauto\s"), -3),
        (re.compile(r"^\s*(public|private|protected)\s*:|\b(vector|unordered_map|unordered_set|pair|priority_queue)<"
                    r"|\.(length|size|push_back|begin|end|charAt)\(\)", M), -3),
    ],
    "C++": [
        (re.compile(r"#include\s*<(iostream|bits/stdc\+\+\.h|vector|string|algorithm|map|set|queue|cmath|cstdio|cstring)>"), 3),
        (re.compile(r"\bstd::"), 2), (re.compile(r"\busing namespace std\b"), 3),
        (re.compile(r"\b(cout|cin|endl)\b"), 2), (re.compile(r"\btemplate\s*<"), 3),
        (re.compile(r"\b(vector|pair|map|set|string)<"), 1.5), (re.compile(r"\b(nullptr|constexpr|auto)\b"), 1.5),
        (re.compile(r"\bclass\s+\w+"), 1), (re.compile(r"\w::\w"), 0.5), (re.compile(r"\b(public|private):"), 1.5),
        (re.compile(r"#include\s*<\w+>"), 1), (re.compile(r"\w+\s*<\w+>\s*&?\s*\w+"), 0.5),
        (re.compile(r"\bSystem\.out\b|^\s*import java|^\s*using System|\bfn\s+\w+\(|\blet\s+mut\b", M), -4),
        (re.compile(r"^#\s*(ifdef|ifndef|endif|define|include|pragma|undef|if defined)\b", M), 2),
    ],
    "C": [
        (re.compile(r"#include\s*<(stdio|stdlib|string|math|stdbool|stdint|assert)\.h>"), 2),
        (re.compile(r"\b(printf|scanf|malloc|calloc|free|memset|strlen|fprintf)\s*\("), 1.5),
        (re.compile(r"\bstruct\s+\w+"), 0.5), (re.compile(r"\w->\w"), 0.5), (re.compile(r"\bNULL\b"), 0.5),
        (re.compile(r"\btypedef\b"), 0.5), (re.compile(r"^\s*#define\s+\w+", M), 0.5),
        (re.compile(r"\b(static|const|unsigned|int|char|void)\s+\**\w+\s*\("), 0.5),
        # C++ (and Java/C#) constructs that C does not have: decisive against C.
        (re.compile(r"\busing namespace\b|\bstd::|\btemplate\s*<|\b(cout|cin|nullptr)\b|\bclass\s+\w+\s*[{:]"
                    r"|#include\s*<(iostream|bits/stdc\+\+\.h|vector|string|algorithm|map|set|queue)>"
                    r"|\w+::\w+|\b(public|private|protected)\s*:|\bnew\s+\w+|\w\s*&\s*\w+\s*[,)]"), -3),
        (re.compile(r"^#\s*(ifdef|ifndef|endif|define|include|pragma|undef|if defined)\b", M), 2),
    ],
    "Go": [
        (re.compile(r"^\s*package \w+\s*$", M), 3), (re.compile(r"^\s*func\s+(\(\w+ \*?\w+\)\s*)?\w+\(", M), 3),
        (re.compile(r"\w\s*:=\s*"), 1.5), (re.compile(r"\bfmt\.\w+"), 2), (re.compile(r"^\s*import\s*\(", M), 2),
        (re.compile(r"\b(chan|defer|go func|make\(|nil)\b"), 1), (re.compile(r"\berr != nil\b"), 3),
        (re.compile(r"^\s*package \w+\s*$", M), 2),
        (re.compile(r"^#\s*(ifdef|ifndef|endif|define|include|pragma|undef|if defined)\b", M), -3),
    ],
    "PHP": [
        (re.compile(r"<\?php"), 5), (re.compile(r"\$[A-Za-z_]\w*"), 1.5), (re.compile(r"\becho\b"), 1),
        (re.compile(r"\$this->"), 2), (re.compile(r"\b(array\(|isset\(|explode\(|foreach\s*\(\s*\$)"), 2),
        (re.compile(r"^\s*(namespace [\w\\]+;|use [\w\\]+;)", M), 1),
        (re.compile(r"^#\s*(ifdef|ifndef|endif|define|include|pragma|undef|if defined)\b", M), -3),
    ],
    "JavaScript": [
        (re.compile(r"\bconsole\.(log|error)\("), 3), (re.compile(r"\b(const|let)\s+\w+\s*="), 1.5),
        (re.compile(r"\bfunction\s*\w*\s*\("), 1.5), (re.compile(r"=>\s*[{(\w]"), 1),
        (re.compile(r"\b(require\(|module\.exports|exports\.\w+|document\.|window\.)"), 3),
        (re.compile(r"===|!=="), 1.5), (re.compile(r"\b(undefined|typeof|prototype)\b"), 1.5),
        (re.compile(r"^\s*(import .* from ['\"]|export (default|const|function|class))", M), 2),
        (re.compile(r"\bvar\s+\w+\s*=[^=]"), 0.5),
        (re.compile(r"\bconstructor\s*\("), 3), (re.compile(r"[\"']use strict[\"']"), 4),
        (re.compile(r"\bObject\.\w+\(|\bexport\s*[*{]|\basync\s+function\b|\bawait\b"), 2),
        (re.compile(r"^\s*package \w+\s*;?\s*$|<\?php|\bfn\s+\w+\(|\bfunc\s+\w+\(|#include", M), -4),
        (re.compile(r"^#\s*(ifdef|ifndef|endif|define|include|pragma|undef|if defined)\b", M), -3),
    ],
    "Rust": [
        (re.compile(r"\bfn\s+\w+\s*(<[^>]*>)?\s*\("), 3), (re.compile(r"\blet\s+(mut\s+)?\w+"), 1.5),
        (re.compile(r"\b(println!|vec!|format!|panic!|assert!|assert_eq!|write!)"), 3),
        (re.compile(r"\b(impl|pub fn|pub struct|enum|trait|match|Some|None|Ok|Err|Self|self)\b"), 0.5),
        (re.compile(r"&mut\b|&self\b|->\s*\w+"), 1), (re.compile(r"^\s*use \w+(::\w+)+", M), 2),
        (re.compile(r"#\[(derive|test|cfg|inline)"), 3), (re.compile(r"\b(u8|u32|u64|usize|i32|i64|f64)\b"), 1),
        (re.compile(r"\bmacro_rules!|#!\[|\b\w+!\s*[({\[]|&'?\w*\s*str\b|\bpub\s*(\(crate\)\s*)?(const|fn|struct|mod|use)\b"), 3),
        (re.compile(r"\bimpl\s*<|::<|\bwhere\s+\w+:"), 2),
        (re.compile(r"^#\s*(ifdef|ifndef|endif|define|include|pragma|undef|if defined)\b", M), -3),
        (re.compile(r"^\s*#!?\[\w+", M), 3), (re.compile(r"\b(Vec|Option|Result|Box|HashMap)<"), 2),
    ],
}
# Cues of languages outside the nine, each a construct that the nine do not write that way
# (line-anchored patterns use [ \t], never \s, so that they stay on one line).
OUTSIDE_CUES: dict[str, list[tuple[re.Pattern, float]]] = {
    "Kotlin": [
        (re.compile(r"^[ \t]*(private |override |suspend |inline )*fun[ \t]+(<[^>]*>[ \t]*)?[\w.]+[ \t]*\(", M), 3),
        (re.compile(r"\b(val|var)[ \t]+\w+[ \t]*(:[ \t]*[\w<>?, ]+)?[ \t]*="), 1.5),
        (re.compile(r":[ \t]*(Int|Long|Boolean|Double|Unit|IntArray|Any)\??\b"), 2),
        (re.compile(r"\b(listOf|mutableListOf|arrayOf|mapOf|intArrayOf|maxOf|minOf)[ \t]*\("), 2),
        (re.compile(r"\{[ \t]*\w+(,[ \t]*\w+)*[ \t]*->"), 2),
        (re.compile(r"^[ \t]*(data |sealed |companion )?(class|object)[ \t]+\w+[ \t]*(\(|:)", M), 1.5),
    ],
    "Swift": [
        (re.compile(r"^[ \t]*(private |public |static |override |@\w+ )*func[ \t]+\w+[ \t]*\([^)]*:[ \t]*[\w\[]", M), 3),
        (re.compile(r"\blet[ \t]+\w+[ \t]*:[ \t]*[\w\[]"), 2), (re.compile(r"\bguard[ \t]+let\b|\bif[ \t]+let\b"), 3),
        (re.compile(r"^[ \t]*import[ \t]+(UIKit|Foundation|SwiftUI)[ \t]*$", M), 4),
        (re.compile(r"\.\.<|\.\.\."), 1.5), (re.compile(r"\)[ \t]*->[ \t]*[\w\[\]?]+[ \t]*\{"), 2),
    ],
    "Dart": [
        (re.compile(r"^[ \t]*import[ \t]+'(package|dart):", M), 4), (re.compile(r"^[ \t]*void[ \t]+main[ \t]*\([ \t]*\)", M), 1.5),
        (re.compile(r"^[ \t]*@override[ \t]*$", M), 2), (re.compile(r"\bWidget[ \t]+build[ \t]*\(|\bsetState[ \t]*\("), 3),
        (re.compile(r"\b(List|Map|Future|Stream)<[\w<>, ]+>[ \t]+\w+[ \t]*[=;(]"), 1),
        (re.compile(r"\bfinal[ \t]+\w+[ \t]+\w+[ \t]*=|\bfinal[ \t]+\w+[ \t]*="), 1),
    ],
    "TypeScript": [
        (re.compile(r"\w\)?[ \t]*:[ \t]*(number|string|boolean|any|void|unknown|never)(\[\])?[ \t]*[,;)={]"), 2.5),
        (re.compile(r"^[ \t]*(export[ \t]+)?(interface|type|enum)[ \t]+\w+(<[^>]*>)?[ \t]*(=|\{|extends)", M), 3),
        (re.compile(r"\b(private|public|protected|readonly)[ \t]+(readonly[ \t]+)?\w+[ \t]*[?!]?:[ \t]*\w"), 2),
        (re.compile(r"\w\?:[ \t]*\w|\bas[ \t]+(const|string|number|any)\b"), 1.5),
        (re.compile(r"^[ \t]*@(Injectable|Component|Module|Controller|Entity|Input)\(", M), 3),
        (re.compile(r"\.tsx?\b"), 1),
    ],
    "Ruby": [
        (re.compile(r"^[ \t]*def[ \t]+[\w?!.]+([ \t]*\(.*\))?[ \t]*$", M), 2), (re.compile(r"^[ \t]*end[ \t]*$", M), 1.5),
        (re.compile(r"\bputs\b|\brequire[ \t]+['\"]|\battr_(accessor|reader|writer)\b"), 2),
        (re.compile(r"\b(do|\{)[ \t]*\|\w+(,[ \t]*\w+)*\|"), 3),
        (re.compile(r"^[ \t]*(module|class)[ \t]+[A-Z]\w*([ \t]*<[ \t]*[\w:]+)?[ \t]*$", M), 1.5),
        (re.compile(r"\b(elsif|unless|nil)\b|@\w+[ \t]*="), 1.5),
    ],
    "SQL": [
        (re.compile(r"\bSELECT\b[\s\S]*?\bFROM\b", re.I), 3),
        (re.compile(r"\b(INSERT\s+INTO|CREATE\s+(TABLE|INDEX|VIEW)|ALTER\s+TABLE|DELETE\s+FROM|UPDATE\s+\w+\s+SET)\b",
                    re.I), 3),
        (re.compile(r"\b(WHERE|GROUP\s+BY|ORDER\s+BY|INNER\s+JOIN|LEFT\s+JOIN|HAVING)\b", re.I), 1.5),
    ],
    "CSS/HTML": [
        (re.compile(r"^[ \t]*[.#][\w-]+([ \t,>+~]+[.#]?[\w:-]+)*[ \t]*\{[ \t]*$", M), 1.5),
        (re.compile(r"^[ \t]*[a-z]+(-[a-z]+)+[ \t]*:[ \t]*[^;{}\n:()]+;[ \t]*(/\*.*\*/)?[ \t]*$", M), 2),
        (re.compile(r"@(media|keyframes|import)\b|\b\d+(px|em|rem|vh|vw)\b|:[ \t]*#[0-9a-fA-F]{3,6}\b"), 2),
        (re.compile(r"<!DOCTYPE html>|<(html|head|body|div|style)\b", re.I), 3),
    ],
    "Dockerfile": [(re.compile(r"^(FROM|RUN|COPY|WORKDIR|CMD|ENTRYPOINT|EXPOSE|ENV|ARG|ADD)[ \t]+\S", M), 3)],
    "shell": [
        (re.compile(r"^#![ \t]*/(usr/)?bin/(env[ \t]+)?(ba|z|da)?sh\b", M), 5), (re.compile(r"^[ \t]*(fi|esac|done)[ \t]*$", M), 2),
        (re.compile(r"\bthen[ \t]*$|\[\[?[ \t]+-[a-z][ \t]", M), 2), (re.compile(r"\$\{?\w+\}?|\$\(", M), 0.5),
    ],
    "Perl": [
        (re.compile(r"^[ \t]*use[ \t]+(strict|warnings)[ \t]*;", M), 4), (re.compile(r"\bmy[ \t]+[\$@%]\w+"), 2),
        (re.compile(r"^[ \t]*sub[ \t]+\w+[ \t]*\{", M), 2), (re.compile(r"=~[ \t]*[ms]?/"), 2),
        (re.compile(r"^[ \t]*package[ \t]+[\w:]+;", M), 1),
    ],
}
MAX_HITS = 3
# How much parse quality counts against the cues (both lie in [0, 1]).
PARSE_WEIGHT = 1.0
CUE_WEIGHT = 1.0
CUE_SCALE = 6.0  # squashing: a total cue weight of 6 is "strong evidence"
# C is (nearly) valid C++: without C++ evidence, which its cues give, the code is C.
PRIOR = {"C": 0.05}
# A margin at which the answer is settled: parsing stops there (the release's close calls are
# margins below 0.5, aicd.splits.release_language.LOW_MARGIN).
DECISIVE = 0.5


def cue_scores(code: str, table: dict[str, list[tuple[re.Pattern, float]]] = CUES) -> dict[str, float]:
    """Per language of `table`, 1 - exp(-w / CUE_SCALE) for the summed cue weight w (0 when
    w <= 0). The caller removes comments first: a licence header says nothing about the code's
    language."""
    scores = {}
    for lang, cues in table.items():
        total = 0.0
        for pattern, weight in cues:
            hits = 0
            for _ in pattern.finditer(code):
                hits += 1
                if hits >= MAX_HITS:
                    break
            total += weight * hits
        scores[lang] = 1.0 - math.exp(-max(total, 0.0) / CUE_SCALE)
    return scores


@cache
def _error_query(language: str) -> tree_sitter.Query:
    return tree_sitter.Query(parser_for(language).language, "(ERROR) @e")


def parse_quality(code: str, language: str, data: bytes | None = None, comment_bytes: int = 0) -> float:
    """1 - (bytes inside ERROR nodes / bytes outside comments); 1.0 for a clean parse.
    Comments are left out of the denominator: a long licence header would otherwise make
    every grammar look good."""
    data = code.encode("utf-8") if data is None else data
    prefix = b""
    if language == "PHP" and b"<?php" not in data[:200]:
        prefix = b"<?php\n"  # the PHP grammar reads text before <?php as HTML
    tree = parser_for(language).parse(prefix + data)
    root = tree.root_node
    if not root.has_error:
        return 1.0
    captures = tree_sitter.QueryCursor(_error_query(language)).captures(root).get("e", [])
    spans = sorted((n.start_byte, n.end_byte) for n in captures)
    covered, end = 0, -1
    for start, stop in spans:  # union of (possibly nested) error spans
        if stop <= end:
            continue
        covered += stop - max(start, end)
        end = stop
    missing = 0.02 if covered == 0 else 0.0  # only MISSING nodes: a small penalty
    return max(0.0, 1.0 - covered / max(1, len(data) + len(prefix) - comment_bytes) - missing)


def identify_language(code: str, candidates: tuple[str, ...] = LANGUAGES,
                      decisive: float = DECISIVE) -> tuple[str | None, float, dict[str, float]]:
    """(best language, its margin over the runner-up, per-language scores of the grammars
    parsed). None for empty code.

    The cue leaders are parsed best first (parsing is most of the cost),
    and parsing stops once no unparsed grammar can change the answer: the best score beats every
    other by at least `decisive`, counting an unparsed grammar at its cue score plus a clean
    parse. The best language is then the one a parse of every shortlisted grammar would give, and
    a margin below `decisive` is exact; one of `decisive` or more is a lower bound."""
    if not code or not code.strip():
        return None, 0.0, {}
    bare = strip_comments(code)
    cues = cue_scores(bare)
    data = code.encode("utf-8")
    comment_bytes = len(data) - len(bare.encode("utf-8"))
    # Parse only the plausible candidates: the cue leaders, at most five of them.
    shortlist = sorted(candidates, key=lambda lang: -cues[lang])[:5]

    def ceiling(lang: str) -> float:  # the most a grammar can score: its cues and a clean parse
        return CUE_WEIGHT * cues[lang] + PARSE_WEIGHT + PRIOR.get(lang, 0.0)

    scores: dict[str, float] = {}
    for i, lang in enumerate(shortlist):
        scores[lang] = CUE_WEIGHT * cues[lang] + PARSE_WEIGHT * parse_quality(code, lang, data, comment_bytes) \
            + PRIOR.get(lang, 0.0)
        rest = shortlist[i + 1:]
        if rest:
            order = sorted(scores, key=lambda name: (-scores[name], LANGUAGES.index(name)))
            rivals = [scores[name] for name in order[1:]] + [ceiling(name) for name in rest]
            if scores[order[0]] - max(rivals) >= decisive:
                return order[0], scores[order[0]] - max(rivals), scores
    order = sorted(scores, key=lambda lang: (-scores[lang], LANGUAGES.index(lang)))
    margin = scores[order[0]] - (scores[order[1]] if len(order) > 1 else 0.0)
    return order[0], margin, scores


# identify_or_unknown's bounds. FIT_MIN: below it the chosen grammar parses too little of the text
# for it to be that language's code (every benchmark row parses whole; `aicd detect` flags such
# a file outside_nine_languages). A partial parse (under FULL_PARSE) needs the chosen
# language's own cues (WEAK_CUES at least) and no strong cue of a language outside the nine
# (OUTSIDE_STRONG): partial parses are how Kotlin, Dart or TypeScript look to the nine grammars,
# and how libstdc++'s macro-heavy C++ looks too, which its cues tell apart.
FIT_MIN = 0.8
FULL_PARSE = 0.97
WEAK_CUES = 0.45
OUTSIDE_STRONG = 0.5


@dataclass(frozen=True)
class Identified:
    """identify_or_unknown's answer: `language` (None: unknown), the best of the nine grammars
    (`closest`) with the share of the text it parses (`fit`), the language outside the nine
    whose cues are strongest (`outside`, "" when none has any) and, for unknown, why."""
    language: str | None
    closest: str | None
    fit: float
    outside: str = ""
    why: str = ""


def identify_or_unknown(code: str) -> Identified:
    """The language of code that may be of none of the nine (what `aicd detect` is handed):
    identify_language's answer, or None where the text is not that language's code (see the
    module's docstring; the bounds above)."""
    closest, _, _ = identify_language(code)
    if closest is None:
        return Identified(None, None, 0.0, why="empty")
    bare = strip_comments(code)
    fit = parse_quality(code, closest)
    own = cue_scores(bare)[closest]
    outside = cue_scores(bare, OUTSIDE_CUES)
    other = max(outside, key=lambda lang: (outside[lang], lang))
    strength = outside[other]
    other = other if strength > 0 else ""
    if fit < FIT_MIN:
        why = f"the closest of the nine grammars ({closest}) parses {fit:.0%} of it" + \
            (f", and it has {other}'s cues" if strength > own else "")
    elif fit < 1.0 and strength > own:
        why = f"{other}'s cues outweigh {closest}'s, whose grammar parses {fit:.0%} of it"
    elif fit < FULL_PARSE and (own < WEAK_CUES or strength >= OUTSIDE_STRONG):
        why = (f"{closest}'s grammar parses {fit:.0%} of it, " + (f"and it has {other}'s cues" if strength >=
               OUTSIDE_STRONG else f"and it has few of {closest}'s cues"))
    else:
        return Identified(closest, closest, fit, other)
    return Identified(None, closest, fit, other, why)


def evaluate(codes: list[str], languages: list[str], **settings) -> dict:
    """Accuracy of identify_language (with `settings`, e.g. decisive) against known
    languages, with per-language recall and the confusion counts (true -> predicted) of every
    miss."""
    from collections import Counter

    confusion: Counter[tuple[str, str]] = Counter()
    for code, truth in zip(codes, languages):
        predicted, _, _ = identify_language(code, **settings)
        confusion[(truth, str(predicted))] += 1
    total = sum(confusion.values())
    right = sum(n for (t, p), n in confusion.items() if t == p)
    per_language = {}
    for lang in sorted({t for t, _ in confusion}):
        n = sum(v for (t, _), v in confusion.items() if t == lang)
        per_language[lang] = {"n": n, "recall": confusion[(lang, lang)] / n}
    return {
        "n": total,
        "accuracy": right / total if total else float("nan"),
        "per_language": per_language,
        "misses": {f"{t} -> {p}": n for (t, p), n in sorted(confusion.items()) if t != p},
    }
