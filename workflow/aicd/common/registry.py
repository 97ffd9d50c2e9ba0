"""Named kinds: one small registry class for every pluggable kind (detectors: aicd.detectors.base;
feature sets: aicd.features.base).

    DETECTORS = Registry("detector kind", admit=check_declarations)

    @DETECTORS.register("ridge")
    class RidgeDetector(Detector): ...

    DETECTORS["ridge"]   # the class; an unknown name is one clear line: the registered names and
                         # the closest of them

A class learns its name as `kind`. `admit(name, cls)`, given by the registry's owner, checks what
the class declares before it is registered (raising AicdError refuses it) and tells the rest of
the package what it needs to know (the types its fitted files hold: aicd.models.fitted_files). A name
registered twice is refused.

Kinds from outside the package, without editing it:
- an installed package's entry points in the registry's group (`aicd.detectors`, `aicd.features`),
  e.g. in its pyproject.toml `[project.entry-points."aicd.detectors"] my_kind = "my_pkg.kinds:MyDetector"`:
  loaded the first time the registry is listed or asked for a name it lacks, each admitted as if
  registered here. One that does not load (its import fails, or its class is refused) is left
  out of the listing and recorded, so it breaks no run that does not use it; a run that asks for
  it by name stops with one line naming its package and what failed;
- a name written `package.module:Class` (a config's `kind:`): imported when first asked for and
  registered under that name.
On the ground floor: every stage may import it."""

from __future__ import annotations

import difflib
import importlib
from collections.abc import Callable, Iterator, MutableMapping

from .errors import AicdError


def did_you_mean(name, options) -> str:
    """ " (did you mean 'x'?)" for the closest of `options`, or ""."""
    close = difflib.get_close_matches(str(name), [str(o) for o in options], n=1, cutoff=0.6)
    return f" (did you mean '{close[0]}'?)" if close else ""


def import_object(reference: str, what: str):
    """`package.module:Name` -> the object, with an error that says what to fix."""
    module_name, sep, attribute = str(reference).partition(":")
    if not sep or not module_name or not attribute:
        raise AicdError(f"{what} {reference!r}: write it as package.module:Name")
    try:
        module = importlib.import_module(module_name)
    except ImportError as err:
        raise AicdError(f"{what} {reference!r}: module {module_name!r} does not import ({err}); install it in the "
                        "environment the detector's jobs run in, or put its folder on PYTHONPATH") from None
    obj = module
    for part in attribute.split("."):
        if not hasattr(obj, part):
            raise AicdError(f"{what} {reference!r}: module {module_name!r} has no {attribute!r}")
        obj = getattr(obj, part)
    return obj


class UnknownName(AicdError, KeyError):
    """A name no class is registered under: an AicdError (one line for the user) that is also a
    KeyError, so `name in registry` and `registry.get(name)` work as for a dict."""

    __str__ = AicdError.__str__  # the message as written (KeyError's own would quote it)


class Registry(MutableMapping):
    """name -> class, filled by the `register(name)` decorator (module docstring)."""

    def __init__(self, what: str, admit: Callable[[str, type], None] | None = None,
                 entry_points: str | None = None) -> None:
        self.what = what              # how messages name an entry: "detector kind", "feature kind"
        self.admit = admit
        self.group = entry_points     # the entry point group of outside packages' kinds
        self._classes: dict[str, type] = {}
        self._outside_loaded = entry_points is None
        self.broken: dict[str, str] = {}  # name -> why an outside package's kind did not load

    def load_entry_points(self) -> None:
        """Register every installed package's kind in the entry point group (once)."""
        if self._outside_loaded:
            return
        self._outside_loaded = True
        from importlib.metadata import entry_points

        for point in sorted(entry_points(group=self.group), key=lambda p: p.name):
            package = f"{point.dist.name} {point.dist.version}" if point.dist else "an installed package"
            try:
                self[point.name] = point.load()
            except Exception as err:  # whatever the package's import raises: kept for the run that asks for it
                self.broken[point.name] = (f"{self.what} {point.name!r} ({point.value}, entry point group "
                                           f"{self.group} of {package}) does not load: {type(err).__name__}: {err}; "
                                           "fix or uninstall that package")

    def register(self, name: str) -> Callable[[type], type]:
        def wrap(cls: type) -> type:
            self[name] = cls
            return cls
        return wrap

    def unknown(self, name) -> UnknownName:
        registered = ", ".join(sorted(self._classes)) or "none"
        outside = f"; a class of your own: package.module:Class, or an entry point in group {self.group}" \
            if self.group else ""
        return UnknownName(f"unknown {self.what} {name!r}{did_you_mean(name, self._classes)}; registered: "
                           f"{registered}{outside}")

    def __getitem__(self, name: str) -> type:
        try:
            return self._classes[name]
        except (KeyError, TypeError):  # TypeError: an unhashable name from a config (a list, a dict)
            pass
        if not isinstance(name, str):
            raise self.unknown(name) from None
        self.load_entry_points()
        if name in self.broken:
            raise AicdError(self.broken[name])
        if name not in self._classes and ":" in name and self.group:  # package.module:Class
            self[name] = import_object(name, self.what)
        if name not in self._classes:
            raise self.unknown(name)
        return self._classes[name]

    def __setitem__(self, name: str, cls: type) -> None:
        """Register `cls` as `name` (what the decorator does), after its owner's checks."""
        if not isinstance(name, str) or not name:
            raise AicdError(f"a {self.what} is registered under a non-empty name, not {name!r}")
        if name in self._classes and self._classes[name] is not cls:
            raise AicdError(f"{self.what} {name!r} is registered twice: by {_where(self._classes[name])} and by "
                            f"{_where(cls)}; give one of them another name")
        if self.admit is not None:
            self.admit(name, cls)
        cls.kind = name
        self._classes[name] = cls

    def __delitem__(self, name: str) -> None:
        del self._classes[name]

    def __iter__(self) -> Iterator[str]:
        self.load_entry_points()
        return iter(list(self._classes))

    def __len__(self) -> int:
        self.load_entry_points()
        return len(self._classes)

    def __repr__(self) -> str:
        return f"Registry({self.what!r}: {', '.join(self._classes)})"


def _where(cls: type) -> str:
    return f"{cls.__module__}.{cls.__qualname__}"
