"""Ids matched against the ids they must cover are told one way everywhere: each disagreement
counted with an example id, and a coverage that never rounds a missing row away."""

from __future__ import annotations

import pandas as pd
import pytest
from aicd.common.errors import AicdError
from aicd.data.ids import disagreement, match
from aicd.scoring.scorer import score


def test_one_sentence_with_counts_and_examples():
    m = match(["a", "b", "b", "x"], ["a", "b", "c"])
    text = disagreement(m)
    assert "1 id of the test split not in the predictions (e.g. 'c')" in text
    assert "1 id of the predictions not in the test split (e.g. 'x')" in text
    assert "1 id more than once in the predictions (e.g. 'b')" in text
    assert text.endswith("2 of 3 ids (66.66%) of the test split match")


def test_coverage_never_rounds_up_to_all():
    m = match([str(i) for i in range(2182)], [str(i) for i in range(2183)])
    assert m.coverage() == "2,182 of 2,183 ids (99.95%)"
    assert match(["a"], ["a"]).coverage() == "1 of 1 id (100%)"


def test_the_workflows_scoring_names_an_example_id():
    test = pd.DataFrame({"id": ["r1", "r2", "r3"]})
    predictions = pd.DataFrame({"id": ["r1", "r2"], "gold": ["human", "machine"], "pred": ["human", "human"]})
    with pytest.raises(AicdError, match=r"1 id of the test split not in the predictions \(e.g. 'r3'\).*rerun the detector"):
        score(predictions, test, ["human", "machine"], resamples=10)
