"""Parameter specs: the one home of a detector's, a feature kind's or the sandbox's settings
(ground floor). Each Param names its type, default and where the default comes from ("paper"
for the paper's settings, "library" for the underlying library's own default, "ours" for a
choice of this project). From a spec come the checks (ParamSpec.check), the config schema
fragment the workflow validates against and fills defaults from (ParamSpec.schema), and the
rows of the parameter tables in docs/ (ParamSpec.markdown)."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from .registry import did_you_mean

_JSON_TYPES = {bool: "boolean", int: "integer", float: "number", str: "string", dict: "object", list: "array",
               type(None): "null"}


# where a library argument the workflow sets itself is set instead (ParamSpec.reserved)
SET_BY_SEED = "the run's seed sets it: config `seed`"
SET_BY_THREADS = "a job's threads set it: the entry's `resources: {threads: N}` (at most the kind's max_threads)"


@dataclass(frozen=True)
class Param:
    name: str
    types: tuple = (str,)       # Python types accepted (int is accepted where float is)
    default: Any = None
    source: str = "ours"        # paper | library | ours
    help: str = ""
    choices: tuple | None = None
    minimum: float | None = None
    exclusive_minimum: bool = False
    maximum: float | None = None

    def check(self, value, owner: str) -> None:
        if value is None and (self.default is None or type(None) in self.types):
            return
        accepted = self.types + ((int,) if float in self.types else ())
        if isinstance(value, bool) and bool not in self.types:
            accepted = ()
        if not isinstance(value, accepted):
            names = " or ".join(_JSON_TYPES.get(t, t.__name__) for t in self.types if t is not type(None))
            raise ValueError(f"the {self.name!r} parameter of {owner} must be {_article(names)}, got {value!r}")
        if self.choices is not None and value not in self.choices:
            raise ValueError(f"the {self.name!r} parameter of {owner} must be one of {list(self.choices)}, got {value!r}")
        if self.minimum is not None and isinstance(value, (int, float)) and not isinstance(value, bool):
            if value < self.minimum or (self.exclusive_minimum and value == self.minimum):
                bound = ">" if self.exclusive_minimum else ">="
                raise ValueError(f"the {self.name!r} parameter of {owner} must be {bound} {self.minimum}, got {value!r}")
        if self.maximum is not None and isinstance(value, (int, float)) and not isinstance(value, bool) \
                and value > self.maximum:
            raise ValueError(f"the {self.name!r} parameter of {owner} must be <= {self.maximum}, got {value!r}")

    def schema(self) -> dict:
        types = [_JSON_TYPES[t] for t in self.types]
        if float in self.types and "integer" not in types:
            types.append("integer")
        if self.default is None and "null" not in types:
            types.append("null")
        out: dict = {"type": types[0] if len(types) == 1 else types, "default": self.default}
        if self.choices is not None:
            out["enum"] = list(self.choices) + ([None] if self.default is None and None not in self.choices else [])
        if self.minimum is not None:
            out["exclusiveMinimum" if self.exclusive_minimum else "minimum"] = self.minimum
        if self.maximum is not None:
            out["maximum"] = self.maximum
        if self.help:
            out["description"] = f"{self.help} (default {self.default!r}: {self.source})"
        return out


def _article(names: str) -> str:
    return ("an " if names[:1] in "aeiou" else "a ") + names


@dataclass(frozen=True)
class ParamSpec:
    """The parameters of one owner (a detector kind, a feature kind, the sandbox limits).
    open=True: names outside the spec pass on to the underlying library (CatBoost, scikit-learn),
    whose own check runs on their values; `library` (called only when a name is outside the
    spec) gives the names the library takes, so a misspelled one is refused with a did-you-mean
    over both, as every other key is, rather than with the library's own message. `reserved`:
    library names the workflow sets itself (name -> where to say it instead: the seed, a job's
    threads), refused with that advice rather than with the library's "multiple values"."""

    owner: str
    params: tuple[Param, ...] = ()
    open: bool = False
    note: str = ""
    library: Callable[[], Iterable[str]] | None = field(default=None, compare=False, repr=False)
    reserved: dict = field(default_factory=dict, compare=False, repr=False)
    by_name: dict = field(default=None, compare=False, repr=False)

    def __post_init__(self):
        object.__setattr__(self, "by_name", {p.name: p for p in self.params})

    def defaults(self) -> dict:
        return {p.name: p.default for p in self.params}

    def check(self, params: dict) -> dict:
        """The params with defaults filled in; ValueError/TypeError naming the first bad one."""
        unknown = sorted(set(params) - set(self.by_name))
        verb = "have" if self.owner.endswith("features") else "has"
        taken = [name for name in unknown if name in self.reserved]
        if taken:
            name = taken[0]
            raise TypeError(f"{self.owner}: the workflow sets {name!r} itself; {self.reserved[name]}")
        if unknown and not self.open:
            raise TypeError(f"{self.owner} {verb} no parameter {', '.join(map(repr, unknown))}; "
                            f"it takes {', '.join(sorted(self.by_name)) or 'none'}")
        if unknown and self.library is not None:
            taken = set(self.library())
            outside = [name for name in unknown if name not in taken]
            if outside:
                known = sorted(set(self.by_name) | taken)
                named = "; ".join(f"{name!r}{did_you_mean(name, known)}" for name in outside)
                raise TypeError(f"{self.owner} {verb} no parameter {named}; it takes "
                                f"{', '.join(sorted(self.by_name))} and {self.note or 'the library arguments'} "
                                f"({len(taken)} in all)")
        for name, value in params.items():
            if name in self.by_name:
                self.by_name[name].check(value, self.owner)
        return {**self.defaults(), **params}

    def schema(self) -> dict:
        return {"type": "object", "additionalProperties": self.open, "default": {},
                "properties": {p.name: p.schema() for p in self.params}}

    def markdown(self) -> str:
        rows = ["| parameter | type | default | from | meaning |", "|---|---|---|---|---|"]
        for p in self.params:
            kinds = " or ".join(_JSON_TYPES.get(t, t.__name__) for t in p.types)
            choices = f" (one of {', '.join(map(str, p.choices))})" if p.choices else ""
            rows.append(f"| `{p.name}` | {kinds} | `{p.default!r}` | {p.source} | {p.help}{choices} |")
        if self.open:
            rows.append(f"| (any other) | | | library | passed to the library ({self.note or 'its own check runs'}) |")
        return "\n".join(rows)
