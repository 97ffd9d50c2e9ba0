"""A directory tree of any depth is the program's own business: the runner's cleanup walks it
iteratively (no recursion, no long paths), so a program that leaves one 1,000 or 100,000 levels
deep gets its own status, and the container serves the next program. Real engines, real image."""

import textwrap
from dataclasses import replace

import pytest
from aicd.sandbox.languages import job_for
from aicd.sandbox.pool import Container
from sandbox_support import HELLO, ONE_ENGINE, RUN, TEST_LIMITS, stdout


def deep_tree(levels: int, where: str = ".") -> str:
    return textwrap.dedent(f"""
        import os
        os.chdir({where!r})
        made = 0
        for _ in range({levels}):
            os.mkdir("d")
            os.chdir("d")
            made += 1
        print(made)
    """)


@pytest.mark.parametrize("where", [".", "/tmp"])
def test_a_tree_1000_levels_deep_gets_its_own_status(pool, where):
    assert pool.run_one(*HELLO, RUN)["status"] == "ok"  # the pool holds a container now
    started, recycled = pool.started, pool.recycled
    result = pool.run_one("Python", deep_tree(1000, where), RUN)
    assert result["status"] == "ok" and stdout(result).strip() == "1000" and result["clean"] is True, result
    built = pool.run_one("Python", deep_tree(1000, where))  # no tests: only built, the tree is never made
    assert built["status"] == "compiled", built
    after = pool.run_one(*HELLO, RUN)
    assert after["status"] == "ok" and stdout(after).strip() == "still fine", after
    assert (pool.started, pool.recycled) == (started, recycled)  # no fresh container


@pytest.fixture(scope="module")
def roomy(engine, sandbox_image):
    """A container whose work folder holds 100,000 folders (its inode cap is 64 per MB)."""
    limits = replace(TEST_LIMITS, work_mb=2048, memory_mb=2560, wall_s=30.0)
    box = Container(sandbox_image, limits, job="test-deep-tree", engine=engine)
    yield box
    box.remove()


@ONE_ENGINE
def test_a_tree_100000_levels_deep_gets_its_own_status(roomy):
    result = roomy.run(job_for("Python", deep_tree(100_000), RUN))
    assert result["status"] == "ok" and stdout(result).strip() == "100000", result
    assert result["clean"] is True and "unclean" not in result, result
    again = roomy.run(job_for(*HELLO, RUN))  # the same container, cleaned up
    assert again["status"] == "ok" and stdout(again).strip() == "still fine" and roomy.alive(), again
