"""Per-row work spread over a job's threads (ground floor): worker processes, each given a chunk
of rows, with results back in input order. One process per thread, since the per-row work
(tree-sitter parses, regular expressions, n-gram analysis) holds the GIL. With one thread or
one chunk everything runs here, in this process."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from itertools import islice
from typing import Any


def chunked(items: Sequence, size: int) -> list[Sequence]:
    return [items[i:i + size] for i in range(0, len(items), size)]


def map_chunks(fn: Callable[..., Any], chunks: Iterable, threads: int = 1, *args) -> Iterator[Any]:
    """fn(chunk, *args) for every chunk, in order. At most `threads` chunks are in flight at
    once beyond the ones running, so the rows handed to workers stay bounded."""
    chunks = iter(chunks)
    if threads <= 1:
        for chunk in chunks:
            yield fn(chunk, *args)
        return
    first = list(islice(chunks, 2))
    if len(first) < 2:
        for chunk in first:
            yield fn(chunk, *args)
        return
    with ProcessPoolExecutor(max_workers=threads) as pool:
        pending = [pool.submit(fn, chunk, *args) for chunk in first]
        for chunk in islice(chunks, 2 * threads - len(pending)):
            pending.append(pool.submit(fn, chunk, *args))
        while pending:
            result = pending.pop(0).result()
            for chunk in islice(chunks, 1):
                pending.append(pool.submit(fn, chunk, *args))
            yield result
