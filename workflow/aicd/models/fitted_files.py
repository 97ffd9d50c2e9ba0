"""Fitted models and featurizers on disk, read back without running code from the file.

The format is skops.io's (a zip of JSON and .npy arrays). Reading it rebuilds only the types it
is told to trust, and a file holding any other type is refused with the type named. Trusted:
what skops trusts itself (builtins, numpy, scipy; of scikit-learn only the estimators listed
here, see skops_io); every registered kind, the package's or one registered by the user's own
code, and the types its class declares it holds (`stored_types`: the package's helper classes,
other library types), added as the kind registers; and the types a caller names
(`trust_types`: the class or function of a `kind: python` detector). CatBoost and transformers objects are stored inside the
file in their own libraries' formats (aicd.models.library_formats).

A pickle (what earlier versions wrote, or a file from anyone) runs whatever code it names when
it is read, so it is read only where the caller says so (`trust_pickle`: the --trust-pickle
flags)."""

from __future__ import annotations

import contextlib
import importlib
import io
import logging
import pickle
import sys
import zipfile
from pathlib import Path

from ..common.errors import AicdError
from .library_formats import STAND_INS, portable, restored

log = logging.getLogger("aicd")

FIXED_ZIP_DATE = (1980, 1, 1, 0, 0, 0)  # the earliest date a zip member can carry
ZIP_MAGIC = b"PK\x03\x04"

# The package's own types a fitted file may hold: each registered kind (a detector stored in a
# file, a feature kind) and the types its class declares it holds (`stored_types`), added as the
# kind registers (aicd.detectors.base, aicd.features.base). The registries push them here rather
# than this module reading the registries: it is on the ground floor and imports no stage
# (tests/unit/project/test_layering.py), and whatever reads a fitted file (load_bundle, load_featurizer)
# has imported the kinds first. So adding a kind stays one class in one file.
_KIND_TYPES: set[str] = set()

# Modules that moved inside the package (old name: new name). A fitted file names the module of
# every type it holds, so a file written before a move would no longer be read (and the detect
# rule's unchanged command would not refit it): reading renames them, and nothing else changes.
MOVED_MODULES = {
    "aicd.library_formats": "aicd.models.library_formats",
    "aicd.features.token_classes": "aicd.codetools.token_classes",
    "aicd.bindings": "aicd.codetools.bindings",
    "aicd.codetext": "aicd.codetools.codetext",
    "aicd.splits.perturb": "aicd.codetools.perturb",
    "aicd.treesitter": "aicd.codetools.treesitter",
}


def trust_kind_types(*names: str) -> None:
    """Trust these types (module.Name) in every fitted file read from now on (the comment above)."""
    _KIND_TYPES.update(names)


def kind_types() -> frozenset[str]:
    """The types the registered kinds hold, as trusted now."""
    return frozenset(_KIND_TYPES)


# The scikit-learn estimators the package's objects hold (module, name): the only ones trusted
# (skops_io), with those the kinds declare; numpy, scipy and builtins are skops's own.
SKLEARN_ESTIMATORS = (
    ("sklearn.pipeline", "Pipeline"),
    ("sklearn.preprocessing", "StandardScaler"),
    ("sklearn.preprocessing", "LabelEncoder"),  # inside HistGradientBoostingClassifier
    ("sklearn.linear_model", "LogisticRegression"),
    ("sklearn.svm", "LinearSVC"),
    ("sklearn.ensemble", "HistGradientBoostingClassifier"),
    ("sklearn.impute", "SimpleImputer"),
    ("sklearn.impute", "MissingIndicator"),
    ("sklearn.feature_extraction.text", "CountVectorizer"),
    ("sklearn.feature_extraction.text", "TfidfTransformer"),
    ("sklearn.feature_extraction", "DictVectorizer"),
)


def type_name(cls) -> str:
    return f"{cls.__module__}.{cls.__qualname__}"


def sklearn_estimators() -> list:
    return [getattr(importlib.import_module(module), name) for module, name in SKLEARN_ESTIMATORS]


def trusted_types(extra=()) -> set[str]:
    estimators = {type_name(cls) for cls in sklearn_estimators()}
    stand_ins = {type_name(cls) for cls in STAND_INS}  # CatBoost and transformers objects in their own formats
    return set(_KIND_TYPES) | estimators | stand_ins | {t for t in extra if not t.endswith(".*")}


def package_trust(packages) -> list[str]:
    """--trust-package NAME, as the trust_types entry NAME.* (every type of NAME and below)."""
    return [f"{p.rstrip('.*')}.*" for p in packages or []]


def _in_packages(type_: str, trust_types) -> bool:
    return any(type_.startswith(t[:-1]) for t in trust_types if t.endswith(".*"))


# Top-level modules of libraries (not a user's own code), for the refusal's advice.
LIBRARIES = ("sklearn", "numpy", "scipy", "catboost", "transformers", "torch", "pandas", "xgboost", "lightgbm",
             "builtins", "collections", "functools", "operator", "re", "skops", "aicd")


SYSTEM = ("os", "posix", "nt", "subprocess", "sys", "shutil", "importlib", "pickle", "socket", "runpy", "ctypes",
          "code", "pty", "webbrowser")


def _refusal(path: Path, refused: list[str]) -> AicdError:
    """Untrusted types named, split into the user's own code and the library types it holds,
    with the flags that trust them."""
    system = [t for t in refused if t.split(".")[0] in SYSTEM]
    if system:  # a file that calls the system: no flag is offered
        return AicdError(f"{path} holds types that are not trusted, so it is not read: {', '.join(refused)}; "
                         f"{', '.join(system)} can run commands or code when the file is read: do not trust this "
                         "file (refit the model yourself)")
    library = [t for t in refused if t.split(".")[0] in LIBRARIES]
    own = [t for t in refused if t not in library]
    parts = []
    if own:
        parts.append(f"{', '.join(own)} {'is' if len(own) == 1 else 'are'} code outside the package (yours, or "
                     "someone's you were given)")
    if library:
        parts.append(f"{', '.join(library)} {'is a library type' if len(library) == 1 else 'are library types'} "
                     "that code holds, which this version does not trust by itself")
    packages = sorted({t.split(".")[0] for t in own})
    one_flag = (f"; or, for every type of your own package, --trust-package {' --trust-package '.join(packages)}"
                + (" with the library types' --trust-type" if library else "")) if packages else ""
    return AicdError(f"{path} holds types that are not trusted, so it is not read: {', '.join(refused)} "
                     f"({'; '.join(parts)}). Reading it rebuilds them without running code from the file, but "
                     f"only types you vouch for: pass {' '.join(f'--trust-type {t}' for t in refused)}{one_flag}. "
                     "In the workflow, a kind: python entry's params.trust_types lists the library types its "
                     "class holds")


def skops_io():
    """skops.io, imported so that of scikit-learn it trusts by default only SKLEARN_ESTIMATORS
    (and its own vetted internals). Left alone, skops lists every estimator of scikit-learn at
    import through sklearn.utils.all_estimators, which imports every module of scikit-learn (and
    torch, where installed): 3-4 s here in each process that reads or writes a model
    (BENCHMARKS.md, "Fitted model files"). Imported earlier by someone else, it trusts them all."""
    if "skops.io" not in sys.modules:
        import sklearn.utils

        listed = [(cls.__name__, cls) for cls in sklearn_estimators()]
        every = sklearn.utils.all_estimators
        sklearn.utils.all_estimators = lambda *args, **kwargs: listed
        try:
            importlib.import_module("skops.io")
        finally:
            sklearn.utils.all_estimators = every
    return importlib.import_module("skops.io")


def add_trust_arguments(parser) -> None:
    """--trust-pickle and --trust-type, for the commands that read a fitted model."""
    parser.add_argument("--trust-pickle", action="store_true",
                        help="also read a model stored as a pickle (by an earlier version of aicd, or by anyone): "
                             "reading a pickle runs any code the file holds, so only for a file whose maker you "
                             "trust; refit the model instead where you can")
    parser.add_argument("--trust-type", action="append", metavar="TYPE",
                        help="also read objects of this type (module.Name) from the model: your own code, such as "
                             "a kind: python detector's class or score function, and the library types your class "
                             "holds (a refusal names each, e.g. sklearn.naive_bayes.MultinomialNB); repeat for more")
    parser.add_argument("--trust-package", action="append", metavar="PACKAGE", default=[],
                        help="also read objects of every type defined in this package or module and below it "
                             "(your own package of plug-ins, in one flag); library types your classes hold still "
                             "need --trust-type")


class _IndexedZipFile(zipfile.ZipFile):
    """skops asks `name in zip_file.namelist()` before it writes each array, and zipfile builds
    that list anew for every question: quadratic in the arrays, 14,467 of them in a gradient-boosted
    model of 12 classes (4 s of its 4.4 s save). While writing, the names come from zipfile's own
    index instead (a view: the same answers, each in constant time)."""

    def namelist(self):
        return self.NameToInfo.keys() if self.mode == "w" else super().namelist()


@contextlib.contextmanager
def _indexed_skops_zip(sio):
    persist = getattr(sio, "_persist", None)
    if getattr(persist, "ZipFile", None) is not zipfile.ZipFile:  # another skops layout: left as it is
        yield
        return
    persist.ZipFile = _IndexedZipFile
    try:
        yield
    finally:
        persist.ZipFile = zipfile.ZipFile


def save_fitted(obj, target, vouched=None) -> None:
    """Write obj to target as a skops file, atomically. Given `vouched` (the user's own code that
    the config names, trusted again when it is read), a type neither it nor the package trusts
    stops the write: a file no reader would open."""
    from ..common.io import atomic_path

    sio = skops_io()
    try:
        with _indexed_skops_zip(sio):
            data = _deflate_schema(sio.dumps(portable(obj), compression=zipfile.ZIP_STORED))
    except (TypeError, ValueError, AttributeError) as err:
        raise AicdError(f"cannot store {type(obj).__name__} at {target} without pickle ({_why(err)})") from None
    untrusted = [] if vouched is None else sorted(
        t for t in set(sio.get_untrusted_types(data=data)) - trusted_types(vouched) if not _in_packages(t, vouched))
    if untrusted:  # refused now: a file no reader would open (aicd detect, the calibrate job, a test set)
        raise AicdError(f"{type(obj).__name__} at {target}: it holds types this project does not trust when it "
                        f"reads a fitted file, so nothing could read it back: {', '.join(untrusted)}; declare them on "
                        f"the kind's class, stored_types = ({', '.join(repr(t) for t in untrusted)},) "
                        "(docs/adding_a_detector.md, \"What the class declares\")")
    with atomic_path(target) as tmp:
        tmp.write_bytes(data)


def _deflate_schema(data: bytes) -> bytes:
    """The skops zip with its JSON deflated and its arrays stored: the JSON shrinks 10-35 times,
    the arrays (most of a model's bytes) barely, and each deflated member costs a decompressor
    when it is read (deflating all of them read 1.2-1.5x slower; BENCHMARKS.md, "Fitted model
    files")."""
    out = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(data)) as source, zipfile.ZipFile(out, "w") as target:
        schema, names = _canonical_ids(source.read("schema.json").decode("utf-8"))
        for info in source.infolist():
            method = zipfile.ZIP_STORED if info.filename.endswith(".npy") else zipfile.ZIP_DEFLATED
            # a fixed date and names: the same model is the same bytes (and sha256) on every run
            member = zipfile.ZipInfo(names.get(info.filename, info.filename), date_time=FIXED_ZIP_DATE)
            member.external_attr = 0o644 << 16
            body = schema.encode("utf-8") if info.filename == "schema.json" else source.read(info)
            target.writestr(member, body, compress_type=method)
    return out.getvalue()


def _canonical_ids(schema: str) -> tuple[str, dict[str, str]]:
    """skops names each object by its id() in the writing process (`"__id__": N`, its array file
    `N.npy`; a bytes object's file by a random uuid): other on every run. Renumbered in order of first appearance, the
    schema and the member names are the same for the same model; the mapping is one to one, so
    shared objects stay shared. Returns (schema, {old member name: new})."""
    import re

    order: dict[str, str] = {}
    uuid = r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"  # a bytes member's name (uuid4)
    for match in re.finditer(rf'"__id__": (\d+)|"file": "(\d+|{uuid})\.(?:npy|bin)"', schema):
        order.setdefault(match.group(1) or match.group(2), str(len(order) + 1))
    renamed = re.sub(r'("__id__": )(\d+)', lambda m: m.group(1) + order[m.group(2)], schema)
    renamed = re.sub(rf'("file": ")(\d+|{uuid})(\.(?:npy|bin)")', lambda m: m.group(1) + order[m.group(2)] + m.group(3),
                     renamed)
    # scikit-learn's text vectorizers keep id(stop_words) to skip re-checking them; an id means
    # nothing in the process that reads the file (it checks them again either way)
    renamed = re.sub(r'("_stop_words_id": \{[^{}]*?"content": ")(\d+)(")', r"\g<1>0\g<3>", renamed)
    names = {f"{old}.{ext}": f"{new}.{ext}" for old, new in order.items() for ext in ("npy", "bin")}
    return renamed, names


def load_fitted(path, what: str, remedy: str, trust_pickle: bool = False, trust_types=()):
    """The object a skops file at `path` holds, read only if every type in it is trusted.
    `what` names the object for messages ("a fitted model"), `remedy` says how to make a new
    one ("refit it with ..."). A pickle is read only with trust_pickle."""
    path = Path(path)
    with open(path, "rb") as fh:
        head = fh.read(4)
    if head == ZIP_MAGIC:
        return _load_skops(path, what, trust_types)
    if trust_pickle:
        return _unpickle(path, what)
    if head[:1] == b"\x80":
        raise AicdError(f"{path} is a pickle ({what} written by an earlier version of aicd, or made elsewhere), "
                        f"and reading a pickle runs any code it holds: {remedy}, or, only if you trust whoever "
                        "made the file, pass --trust-pickle")
    raise AicdError(f"{path} is not {what} this version can read (neither a skops file nor a pickle)")


def _load_skops(path: Path, what: str, trust_types):
    sio = skops_io()
    from skops.io.exceptions import UntrustedTypesFoundException

    data = with_moved_modules(path.read_bytes())
    trusted = trusted_types(trust_types)
    if any(t.endswith(".*") for t in trust_types):  # --trust-package: the file's types from those packages
        trusted |= {t for t in sio.get_untrusted_types(data=data) if _in_packages(t, trust_types)}
    try:
        # skops reads the whole file into a tree of nodes, audits every type in it against the
        # trusted list and refuses the file before building anything when one is not trusted
        obj = sio.loads(data, trusted=sorted(trusted))
    except UntrustedTypesFoundException:
        raise _refusal(path, sorted(set(sio.get_untrusted_types(data=data)) - trusted)) from None
    except ImportError as err:
        raise _import_error(path, what, err) from None
    except Exception as err:  # a zip of something else, a file cut short, a malformed file of trusted types
        raise AicdError(f"{path} is not {what} this version can read ({_why(err)})") from None
    try:
        return restored(obj)  # the CatBoost and transformers objects, from their own formats
    except AicdError as err:
        raise AicdError(f"{path}: {err}") from None
    except Exception as err:
        raise AicdError(f"{path} is not {what} this version can read ({_why(err)})") from None


def with_moved_modules(data: bytes) -> bytes:
    """A skops file's bytes with the modules of MOVED_MODULES renamed in its schema; other files,
    and files that name none of them, as they are."""
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as src:
            schema = src.read("schema.json").decode()
            if not any(f'"{old}"' in schema for old in MOVED_MODULES):
                return data
            members = {info: src.read(info) for info in src.infolist()}
    except (zipfile.BadZipFile, KeyError, UnicodeDecodeError, OSError):
        return data  # not a skops file: the reader says so
    for old, new in MOVED_MODULES.items():
        schema = schema.replace(f'"{old}"', f'"{new}"')
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as dst:
        for info, content in members.items():
            dst.writestr(info, schema.encode() if info.filename == "schema.json" else content)
    return out.getvalue()


def _unpickle(path: Path, what: str):
    from ..common.io import read_trusted_pickle

    log.warning("reading the pickle %s (--trust-pickle): this runs any code the file holds", path)
    try:
        return read_trusted_pickle(path, renamed_modules=MOVED_MODULES)
    except ImportError as err:
        raise _import_error(path, what, err) from None
    except (pickle.UnpicklingError, EOFError, AttributeError, ValueError, TypeError, IndexError) as err:
        raise AicdError(f"{path} is not {what} this version can read ({_why(err)})") from None


def _import_error(path: Path, what: str, err: ImportError) -> AicdError:
    name = getattr(err, "name", None)
    if name and name.split(".")[0] != "aicd":  # a plug-in's own module (kind: python)
        return AicdError(f"{path} holds {what} from the module {name!r}, which does not import here: install it, "
                         "or put its folder on PYTHONPATH")
    return AicdError(f"{path} is not {what} this version can read ({_why(err)})")


def _why(err: Exception) -> str:
    text = str(err).strip().splitlines()[0] if str(err).strip() else ""
    return f"{type(err).__name__}: {text[:200]}" if text else type(err).__name__
