"""Per-row work spread over a job's threads (ground floor): worker processes, each given a chunk
of rows, with results back in input order. One process per thread, since the per-row work
(tree-sitter parses, regular expressions, n-gram analysis) holds the GIL. With one thread or
one chunk everything runs here, in this process.

Workers start from a forkserver, not as forks of the job: a forked worker's resident set counts
every page of the job's memory it shares, and Snakemake's benchmark files and SLURM's memory
accounting sum the resident sets of a job's processes, so sixteen forks of a job holding 10 GB
of rows would read as 170 GB and be killed. The forkserver imports the worker function's module
once; each worker then starts in a fraction of a second and holds only its own chunk."""

from __future__ import annotations

import multiprocessing
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from itertools import islice
from typing import Any

from .errors import AicdError

_PRELOAD: list[str] = []


def worker_pool(threads: int, fn: Callable) -> ProcessPoolExecutor:
    """A pool of `threads` workers started by the forkserver, which imports fn's module first
    (when the server is not running yet: it starts once per process)."""
    context = multiprocessing.get_context("forkserver")
    if fn.__module__ not in _PRELOAD and fn.__module__ != "__main__":
        _PRELOAD.append(fn.__module__)
        context.set_forkserver_preload(list(_PRELOAD))
    return ProcessPoolExecutor(max_workers=threads, mp_context=context)


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
    try:
        with worker_pool(threads, fn) as pool:
            pending = [pool.submit(fn, chunk, *args) for chunk in first]
            for chunk in islice(chunks, 2 * threads - len(pending)):
                pending.append(pool.submit(fn, chunk, *args))
            while pending:
                result = pending.pop(0).result()
                for chunk in islice(chunks, 1):
                    pending.append(pool.submit(fn, chunk, *args))
                yield result
    except BrokenProcessPool:  # from a result or from a submit after a worker died
        raise AicdError(f"a worker process of {fn.__module__}.{fn.__name__} died: the job ran out of memory "
                        "(raise its mem_mb), or a script called it with threads > 1 without "
                        "`if __name__ == \"__main__\":` around its main code (workers import the main "
                        "script, as with Python's spawn)") from None
