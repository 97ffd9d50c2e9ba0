"""A count said in words (ground floor): `counted(1, "file")` is "1 file", `counted(3, "file")`
"3 files", with thousands separators; a noun whose plural is not noun + s gives it."""

from __future__ import annotations


def counted(n: int, noun: str, plural: str | None = None) -> str:
    return f"{int(n):,} {noun if int(n) == 1 else plural or noun + 's'}"
