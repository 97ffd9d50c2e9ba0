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
registered twice is refused. On the ground floor: every stage may import it."""

from __future__ import annotations

import difflib
from collections.abc import Callable, Iterator, MutableMapping

from .errors import AicdError


def did_you_mean(name, options) -> str:
    """ " (did you mean 'x'?)" for the closest of `options`, or ""."""
    close = difflib.get_close_matches(str(name), [str(o) for o in options], n=1, cutoff=0.6)
    return f" (did you mean '{close[0]}'?)" if close else ""


class UnknownName(AicdError, KeyError):
    """A name no class is registered under: an AicdError (one line for the user) that is also a
    KeyError, so `name in registry` and `registry.get(name)` work as for a dict."""

    __str__ = AicdError.__str__  # the message as written (KeyError's own would quote it)


class Registry(MutableMapping):
    """name -> class, filled by the `register(name)` decorator (module docstring)."""

    def __init__(self, what: str, admit: Callable[[str, type], None] | None = None) -> None:
        self.what = what              # how messages name an entry: "detector kind", "feature kind"
        self.admit = admit
        self._classes: dict[str, type] = {}

    def register(self, name: str) -> Callable[[type], type]:
        def wrap(cls: type) -> type:
            self[name] = cls
            return cls
        return wrap

    def unknown(self, name) -> UnknownName:
        registered = ", ".join(sorted(self._classes)) or "none"
        return UnknownName(f"unknown {self.what} {name!r}{did_you_mean(name, self._classes)}; registered: {registered}")

    def __getitem__(self, name: str) -> type:
        try:
            return self._classes[name]
        except (KeyError, TypeError):  # TypeError: an unhashable name from a config (a list, a dict)
            raise self.unknown(name) from None

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
        return iter(self._classes)

    def __len__(self) -> int:
        return len(self._classes)

    def __repr__(self) -> str:
        return f"Registry({self.what!r}: {', '.join(self._classes)})"


def _where(cls: type) -> str:
    return f"{cls.__module__}.{cls.__qualname__}"
