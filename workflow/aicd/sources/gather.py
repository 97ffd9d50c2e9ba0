"""Human code gathered from package files: pinned ones (`pinned:NAME` roots, exact versions
from config/pinned_inputs.yaml, read from a verified cache; see aicd.sources.pinned) or any
folder or archive on this machine (glob patterns), for the demo's unseen languages and for
measuring language identification. The repository itself holds no third-party code.

With `pinned_only: true` (the demo) every root must be pinned, so what the machine has
installed cannot change the rows. The report records each input read: name, version and
sha256 of a pinned package, and for a folder or glob one digest over the files read.

A file of at most `whole_file_lines` lines is one sample; a longer file gives up to
`units_per_file` top-level definitions (functions, classes, impl blocks) cut out with
tree-sitter, so samples look like the function- and file-level code of The Vault and The Heap.
Files are visited in a seeded order and sampling stops at `per_language` samples, so memory is
bounded by one file and the result is the same on every run over the same files."""

from __future__ import annotations

import glob
import hashlib
import io
import logging
import os
import random
import tarfile
import zipfile
from collections import Counter
from collections.abc import Iterator

import pandas as pd

from ..codetools.codetext import strip_comments
from ..codetools.treesitter import parse
from ..common.errors import AicdError
from ..data.schema import LANGUAGES, canonical_language
from . import pinned as pins

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
    pinned = spec.get("pinned") or pins.pins_for(roots)  # the rule passes the entries it pins
    rows: list[dict] = []
    report: dict = {"per_language": per_language, "languages": {}}
    inputs: dict[str, dict] = {}
    archives = _Archives()
    for raw_lang, patterns in roots.items():
        language = canonical_language(raw_lang)
        if language is None:
            raise AicdError(f"gather.roots: unknown language {raw_lang!r}; use one of {', '.join(LANGUAGES)}")
        patterns = [patterns] if isinstance(patterns, str) else list(patterns)
        files: list[tuple] = []
        for pattern in patterns:
            if pattern.startswith(pins.PREFIX):
                name = pattern[len(pins.PREFIX):]
                if name not in pinned:
                    raise AicdError(f"gather.roots: {pattern!r} has no pinned entry")
                entry = pinned[name]
                path = str(pins.verified_path(name, entry))
                label = f"{name}@{entry['version']}"
                files += [(path, member, label) for _, member in _candidates(path, EXTENSIONS[language])]
                inputs[f"package:{name}"] = {"kind": "package", "name": name, **entry}
            else:
                if spec.get("pinned_only"):
                    raise AicdError(f"gather.roots.{raw_lang}: {pattern!r} is not a pinned input, and pinned_only "
                                    "is set: name a package of config/pinned_inputs.yaml as 'pinned:NAME'")
                files += [(path, member, None) for path, member in _candidates(pattern, EXTENSIONS[language])]
        # pinned files sort by package and member, so the cache's location changes nothing
        files = sorted(set(files), key=lambda f: (f[2] or f[0], f[1] or ""))
        random.Random(f"{seed}:{language}").shuffle(files)
        stats: Counter[str] = Counter(files_found=len(files))
        got = 0
        installed = hashlib.sha256()  # over the unpinned files read, in reading order
        for path, member, label in files:
            if got >= per_language:
                break
            data, text, reason = read_file(path, member, archives)
            stats["files_read"] += 1
            if label is None and data is not None:
                installed.update(f"{_show((path, member))}\0{hashlib.sha256(data).hexdigest()}\n".encode())
                stats["installed_files_read"] += 1
            if reason:
                stats[f"skipped_{reason}"] += 1
                continue
            shown = _show((path, member)) if label is None else f"{label}!{member}"
            for k, unit in enumerate(_units(text, language, whole, units_per_file)):
                if got >= per_language:
                    break
                if _code_lines(unit) < min_lines:
                    stats["skipped_too_short"] += 1
                    continue
                rows.append({"code": unit, "language": language, "path": f"{shown}#{k}"})
                got += 1
        if stats["installed_files_read"]:
            inputs[f"installed:{language}"] = {"kind": "installed", "roots": [p for p in patterns if not
                                               p.startswith(pins.PREFIX)], "files_read": stats["installed_files_read"],
                                               "sha256": installed.hexdigest()}
        stats["samples"] = got
        if got < per_language:
            log.warning("%s: found %d of %d samples under %s", language, got, per_language, patterns)
        report["languages"][language] = dict(stats)
    missing = [lang for lang in LANGUAGES if report["languages"].get(lang, {}).get("samples", 0) == 0]
    report["languages_without_samples"] = missing
    report["languages_short"] = {lang: s["samples"] for lang, s in report["languages"].items()
                                 if s["samples"] < per_language}
    report["inputs"] = dict(sorted(inputs.items()))
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
            elif root.endswith((".tar.gz", ".tgz", ".tar", ".deb")):
                with _open_tar(root) as tf:
                    for member in sorted(m.name for m in tf.getmembers() if m.isfile()):
                        if member.endswith(extensions):
                            yield root, member
            elif root.endswith(extensions):
                yield root, None


class _Archives:
    """Tar archives (.tar.gz, .tgz, .deb) read once: each member's bytes by name. Opening a
    compressed tar per member would decompress it from the start every time."""

    def __init__(self):
        self._members: dict[str, dict[str, bytes]] = {}

    def read(self, path: str, member: str) -> bytes | None:
        if path not in self._members:
            with _open_tar(path) as tf:
                self._members[path] = {m.name: (tf.extractfile(m).read() if m.size <= MAX_FILE_BYTES else None)
                                       for m in tf.getmembers() if m.isfile()}
        return self._members[path].get(member, b"")


def _open_tar(path: str) -> tarfile.TarFile:
    """A tar archive, or the data.tar.* inside a Debian package (an `ar` archive)."""
    if not path.endswith(".deb"):
        return tarfile.open(path)
    with open(path, "rb") as fh:
        data = fh.read()
    if data[:8] != b"!<arch>\n":
        raise AicdError(f"{path}: not a Debian package (no ar header)")
    offset = 8
    while offset + 60 <= len(data):
        name = data[offset:offset + 16].decode("ascii", "replace").strip().rstrip("/")
        size = int(data[offset + 48:offset + 58].decode("ascii").strip() or 0)
        if name.startswith("data.tar"):
            return tarfile.open(fileobj=io.BytesIO(data[offset + 60:offset + 60 + size]))
        offset += 60 + size + (size % 2)
    raise AicdError(f"{path}: a Debian package without data.tar")


def read_file(path: str, member: str | None = None,
              archives: _Archives | None = None) -> tuple[bytes | None, str | None, str | None]:
    """(bytes, text, skip reason) of a file, or of a member of the archive at `path`: text is
    None when the file is skipped (unreadable, too_large, binary, invalid_utf8, empty), else
    decoded byte for byte. How the sources stage reads what it gathers, and `aicd detect` what it
    is given (aicd.detectors.apply)."""
    try:
        if member is None:
            if os.path.getsize(path) > MAX_FILE_BYTES:
                return None, None, "too_large"
            with open(path, "rb") as fh:
                data = fh.read()
        elif path.endswith(".zip"):
            with zipfile.ZipFile(path) as zf:
                data = zf.read(member)
        else:
            data = (archives or _Archives()).read(path, member)
            if data is None:
                return None, None, "too_large"
    except (OSError, tarfile.TarError):
        return None, None, "unreadable"
    if len(data) > MAX_FILE_BYTES:
        return data, None, "too_large"
    if b"\x00" in data:
        return data, None, "binary"
    try:
        text = io.TextIOWrapper(io.BytesIO(data), encoding="utf-8", newline="").read()
    except UnicodeDecodeError:
        return data, None, "invalid_utf8"
    return (data, text, None) if text.strip() else (data, None, "empty")


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
