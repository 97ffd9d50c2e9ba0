import numpy as np

from aicd.features.tfidf import TfidfSvdFeaturizer, whitespace_tokens


def corpus(n=800, seed=0):
    rng = np.random.default_rng(seed)
    words = [f"tok{i}" for i in range(400)] + ["The", "the", "a", "foo(x);", "Bar.baz()", "if", "{", "}"]
    return [" ".join(rng.choice(words, size=40)) + "\n\tend" for _ in range(n)]


def test_whitespace_tokens_only():
    assert whitespace_tokens("a  b\tc\nd\r\n foo(x);") == ["a", "b", "c", "d", "foo(x);"]


def test_paper_settings():
    f = TfidfSvdFeaturizer(seed=1)
    vec = f.vectorizer
    assert vec.lowercase is False and vec.stop_words is None and vec.ngram_range == (1, 3)
    assert vec.max_features == 5000
    X = f.fit_transform(corpus())
    vocab = vec.vocabulary_
    assert len(vocab) == 5000  # capped: the corpus has far more uni-to-tri-grams
    assert X.shape == (800, 500)
    # n-grams are 1 to 3 whitespace tokens joined by one space; no token holds whitespace
    assert {len(t.split(" ")) for t in vocab} == {1, 2, 3}
    assert not any(any(ch.isspace() for ch in tok) for t in vocab for tok in t.split(" "))
    assert {"The", "the", "a", "foo(x);", "Bar.baz()", "{"} <= set(vocab)  # no stop words, no case folding


def test_case_and_punctuation_are_kept():
    f = TfidfSvdFeaturizer(max_features=50, svd_components=5, seed=0)
    f.fit_transform(["The the foo(x); foo(x);"] * 3 + ["bar Bar"] * 3)
    vocab = set(f.vectorizer.vocabulary_)
    assert {"The", "the", "foo(x);", "bar", "Bar"} <= vocab


def test_fitted_on_train_only():
    f = TfidfSvdFeaturizer(max_features=100, svd_components=10, seed=0)
    f.fit_transform(corpus(200))
    before = dict(f.vectorizer.vocabulary_)
    out = f.transform(["UNSEEN_TOKEN only here"])
    assert f.vectorizer.vocabulary_ == before and "UNSEEN_TOKEN" not in before
    assert out.shape == (1, 10)


def test_deterministic_given_seed():
    a = TfidfSvdFeaturizer(max_features=300, svd_components=20, seed=7).fit_transform(corpus(300))
    b = TfidfSvdFeaturizer(max_features=300, svd_components=20, seed=7).fit_transform(corpus(300))
    assert np.allclose(a, b)
