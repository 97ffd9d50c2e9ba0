"""The report's data block says where a pool-built task's adversarial class comes from."""

from __future__ import annotations

from aicd.report.data_block import data_block

T3 = {"task": "fine_grained", "splits": {
    "train": {"rows": 40, "target": {"human": 10, "machine": 10, "hybrid": 10, "adversarial": 10}},
    "test": {"rows": 8, "target": {"human": 2, "machine": 2, "hybrid": 2, "adversarial": 2}}}}
PROMPTED = "adversarial` protocol: a generator prompted to write code that looks human-written"


def test_a_pool_built_adversarial_class_is_said_to_come_from_a_prompt():
    text = "\n".join(data_block({"fine_grained": T3}, {"fine_grained": "T3"}, {"fine_grained": "build"}))
    assert PROMPTED in text and "trained to evade detection" in text


def test_the_release_and_tasks_without_the_class_say_nothing_of_it():
    release = "\n".join(data_block({"fine_grained": T3}, {"fine_grained": "T3"}, {"fine_grained": "release"}))
    assert PROMPTED not in release  # the release's adversarial code is the paper's own
    binary = {"task": "binary", "splits": {"test": {"rows": 4, "target": {"human": 2, "machine": 2}}}}
    assert PROMPTED not in "\n".join(data_block({"binary": binary}, {"binary": "T1"}, {"binary": "build"}))
