"""Human code gathered from sources installed on this machine (standard libraries that
toolchain packages put on disk, npm modules, source distributions), for the demo's unseen
languages and for measuring language identification. The repository itself holds no
third-party code: everything here is read at run time from the paths the config names.

A file of at most `whole_file_lines` lines is one sample; a longer file gives up to
`units_per_file` top-level definitions (functions, classes, impl blocks) cut out with
tree-sitter, so samples look like the function- and file-level code of The Vault and The Heap.
Files are visited in a seeded order and sampling stops at `per_language` samples, so memory is
bounded by one file and the result is the same on every run over the same files."""

from __future__ import annotations

import glob
import io
import logging
import os
import random
import tarfile
import zipfile
from collections import Counter
from collections.abc import Iterator

import pandas as pd

from ..errors import AicdError
from ..normalize.langid import strip_comments
from ..schema import LANGUAGES, canonical_language
from ..treesitter import parse

log = logging.getLogger(__name__)

EXTENSIONS = {
    "Python": (".py",), "Java": (".java",), "C++": (".cc", ".cpp", ".cxx", ".hpp", ".tcc"),
    "C": (".c",), "Go": (".go",), "PHP": (".php",), "C#": (".cs",),
    "JavaScript": (".js", ".mjs", ".cjs"), "Rust": (".rs",),
}
# Definitions that parse on their own, per grammar.
UNIT_TYPES = frozenset({
    "function_definition", "class_definition", "decorated_definition",  # Python, C, C++, PHP
    "class_declaration", "interface_declaration", "enum_declaration", "record_declaration",  # Java, C#, JS, PHP
    "function_declaration", "method_declaration",  # Go, JS
    "function_item", "impl_item", "struct_item", "trait_item",  # Rust
    "template_declaration",  # C++
})
# Containers to look inside for units (namespaces, modules, export wrappers).
CONTAINER_TYPES = frozenset({"namespace_definition", "namespace_declaration", "declaration_list",
                             "file_scoped_namespace_declaration", "export_statement", "mod_item",
                             "program", "translation_unit", "module", "source_file", "compilation_unit"})
MAX_FILE_BYTES = 10 * 1024 * 1024


def gather(spec: dict, seed: int) -> tuple[pd.DataFrame, dict]:
    """Rows (code, language, path) and a report of what was found, read and skipped."""
    roots = spec.get("roots") or {}
    per_language = int(spec.get("per_language", 50))
    whole = int(spec.get("whole_file_lines", 300))
    units_per_file = int(spec.get("units_per_file", 3))
    min_lines = int(spec.get("min_lines", 6))  # non-blank, non-comment lines
    rows: list[dict] = []
    report: dict = {"per_language": per_language, "languages": {}}
    for raw_lang, patterns in roots.items():
        language = canonical_language(raw_lang)
        if language is None:
            raise AicdError(f"gather.roots: unknown language {raw_lang!r}; use one of {', '.join(LANGUAGES)}")
        files = sorted(set(_candidates(patterns, EXTENSIONS[language])))
        random.Random(f"{seed}:{language}").shuffle(files)
        stats: Counter[str] = Counter(files_found=len(files))
        got = 0
        for ref in files:
            if got >= per_language:
                break
            text, reason = _read(ref)
            stats["files_read"] += 1
            if reason:
                stats[f"skipped_{reason}"] += 1
                continue
            for k, unit in enumerate(_units(text, language, whole, units_per_file)):
                if got >= per_language:
                    break
                if _code_lines(unit) < min_lines:
                    stats["skipped_too_short"] += 1
                    continue
                rows.append({"code": unit, "language": language, "path": f"{_show(ref)}#{k}"})
                got += 1
        stats["samples"] = got
        if got < per_language:
            log.warning("%s: found %d of %d samples under %s", language, got, per_language, patterns)
        report["languages"][language] = dict(stats)
    missing = [lang for lang in LANGUAGES if report["languages"].get(lang, {}).get("samples", 0) == 0]
    report["languages_without_samples"] = missing
    return pd.DataFrame(rows, columns=["code", "language", "path"]), report


def _candidates(patterns, extensions) -> Iterator[tuple[str, str | None]]:
    """(path, archive member or None) for every file with one of the extensions."""
    for pattern in [patterns] if isinstance(patterns, str) else patterns:
        for root in sorted(glob.glob(os.path.expanduser(pattern))):
            if not os.path.exists(root):  # a dangling link (e.g. src.zip of an absent -source package)
                continue
            if os.path.isdir(root):
                for dirpath, dirnames, filenames in os.walk(root):
                    dirnames.sort()
                    for name in sorted(filenames):
                        if name.endswith(extensions):
                            yield os.path.join(dirpath, name), None
            elif root.endswith(".zip"):
                with zipfile.ZipFile(root) as zf:
                    for member in zf.namelist():
                        if member.endswith(extensions):
                            yield root, member
            elif root.endswith((".tar.gz", ".tgz", ".tar")):
                with tarfile.open(root) as tf:
                    for member in tf.getmembers():
                        if member.isfile() and member.name.endswith(extensions):
                            yield root, member.name
            elif root.endswith(extensions):
                yield root, None


def _read(ref: tuple[str, str | None]) -> tuple[str | None, str | None]:
    path, member = ref
    try:
        if member is None:
            if os.path.getsize(path) > MAX_FILE_BYTES:
                return None, "too_large"
            with open(path, "rb") as fh:
                data = fh.read()
        elif path.endswith(".zip"):
            with zipfile.ZipFile(path) as zf:
                data = zf.read(member)
        else:
            with tarfile.open(path) as tf:
                fh = tf.extractfile(member)
                data = fh.read() if fh else b""
    except OSError:
        return None, "unreadable"
    if len(data) > MAX_FILE_BYTES:
        return None, "too_large"
    if b"\x00" in data:
        return None, "binary"
    try:
        text = io.TextIOWrapper(io.BytesIO(data), encoding="utf-8", newline="").read()
    except UnicodeDecodeError:
        return None, "invalid_utf8"
    return (text, None) if text.strip() else (None, "empty")


def _units(text: str, language: str, whole: int, limit: int) -> list[str]:
    if text.count("\n") + 1 <= whole:
        return [text]
    tree = parse(text, language)
    data = text.encode("utf-8")
    prefix = "<?php\n" if language == "PHP" else ""
    found: list[str] = []
    stack = [tree.root_node]
    while stack and len(found) < limit:
        node = stack.pop(0)
        for child in node.named_children:
            lines = child.end_point[0] - child.start_point[0] + 1
            if child.type in UNIT_TYPES and 3 <= lines <= whole and not child.has_error:
                found.append(prefix + data[child.start_byte:child.end_byte].decode("utf-8"))
                if len(found) >= limit:
                    break
            elif child.type in UNIT_TYPES or child.type in CONTAINER_TYPES or child.type.endswith("_body"):
                stack.append(child)  # too long a class, or a namespace: look inside
    return found


def _code_lines(code: str) -> int:
    return sum(1 for line in strip_comments(code).splitlines() if line.strip() and not line.lstrip().startswith("#!"))


def _show(ref: tuple[str, str | None]) -> str:
    path, member = ref
    return path if member is None else f"{path}!{member}"
