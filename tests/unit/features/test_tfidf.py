from collections import Counter

import numpy as np
import pytest
import scipy.sparse as sp
from aicd.features import tfidf
from aicd.features.tfidf import TfidfSvdFeaturizer, _bucket_of, top_ngrams, whitespace_tokens
from sklearn.decomposition import TruncatedSVD
from sklearn.feature_extraction.text import TfidfVectorizer


def corpus(n=800, seed=0, words=400):
    rng = np.random.default_rng(seed)
    vocabulary = [f"tok{i}" for i in range(words)] + ["The", "the", "a", "foo(x);", "Bar.baz()", "if", "{", "}"]
    return [" ".join(rng.choice(vocabulary, size=40)) + "\n\tend" for _ in range(n)]


def sklearn_vectorizer(**kw):
    return TfidfVectorizer(tokenizer=whitespace_tokens, token_pattern=None, lowercase=False, ngram_range=(1, 3),
                           dtype=np.float32, **kw)


def exact_top(codes, k):
    """The k most frequent 1-3-grams by brute force, ties alphabetical."""
    analyze = sklearn_vectorizer().build_analyzer()
    counts = Counter(g for c in codes for g in analyze(c))
    return sorted(g for g, _ in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[:k])


def test_whitespace_tokens_only():
    assert whitespace_tokens("a  b\tc\nd\r\n foo(x);") == ["a", "b", "c", "d", "foo(x);"]


def test_the_defaults_are_the_papers():
    f = TfidfSvdFeaturizer(seed=1)
    assert (f.max_features, f.ngram_max, f.svd_components) == (5000, 3, 500)


# The paper's settings at a smaller scale: 500 n-grams and 20 components instead of 5,000 and
# 500 (the exact SVD of the 5,000 x 5,000 Gram matrix took over a minute here). Neither the
# cap, the n-gram lengths, the case, the stop words nor the output's shape and type depend on
# the numbers: they are the same code with other values. 18 distinct tokens keep trigrams in
# the top 500 (19 unigrams and at most 342 bigrams rank above them), as the paper's 5,000 do
# on real code.
SMALL = {"max_features": 500, "svd_components": 20}


@pytest.fixture(scope="module")
def small_fit():
    codes = corpus(200, words=10)
    f = TfidfSvdFeaturizer(**SMALL, seed=1)
    return codes, f, f.fit_transform(codes)


def test_no_lowercasing_no_stop_words_uni_to_tri_grams(small_fit):
    _, f, _ = small_fit
    vec = f.vectorizer
    assert vec.lowercase is False and vec.stop_words is None and vec.ngram_range == (1, 3)


def test_the_vocabulary_is_capped_at_max_features(small_fit):
    codes, f, _ = small_fit
    distinct = {g for c in codes for g in sklearn_vectorizer().build_analyzer()(c)}
    assert len(distinct) > 2 * SMALL["max_features"]  # the corpus has far more uni-to-tri-grams
    assert len(f.vocabulary) == SMALL["max_features"]


def test_the_output_is_one_float32_row_of_svd_components_per_code(small_fit):
    codes, _, X = small_fit
    assert X.shape == (len(codes), SMALL["svd_components"]) and X.dtype == np.float32


def test_ngrams_are_one_to_three_whitespace_tokens(small_fit):
    _, f, _ = small_fit
    vocab = f.vocabulary
    # n-grams are 1 to 3 whitespace tokens joined by one space; no token holds whitespace
    assert {len(t.split(" ")) for t in vocab} == {1, 2, 3}
    assert not any(any(ch.isspace() for ch in tok) for t in vocab for tok in t.split(" "))


def test_no_stop_words_are_dropped_and_case_is_kept(small_fit):
    _, f, _ = small_fit
    assert {"The", "the", "a", "foo(x);", "Bar.baz()", "{"} <= set(f.vocabulary)  # no stop words, no case folding


def test_the_bucket_of_an_ngram_is_the_hashing_vectorizers():
    from sklearn.feature_extraction.text import HashingVectorizer

    hashing = HashingVectorizer(tokenizer=whitespace_tokens, token_pattern=None, lowercase=False, n_features=1 << 12,
                                alternate_sign=False, norm=None)
    for gram in ["x", "def", "héllo", "}", "foo(x);", "Bar.baz()", "0", "🙂"]:
        assert hashing.transform([gram]).indices.tolist() == [_bucket_of(gram, 1 << 12)], gram


@pytest.mark.parametrize("buckets", [1 << 4, 1 << 8, 1 << 22])
def test_the_vocabulary_is_the_exact_top_k_however_the_buckets_collide(buckets):
    """With 16 buckets nearly every n-gram collides; the threshold check still gives the
    exact top k (ties broken alphabetically)."""
    codes = corpus(300, seed=3)
    assert sorted(top_ngrams(codes, 3, 200, buckets=buckets)) == exact_top(codes, 200)
    assert sorted(top_ngrams(codes[:5], 3, 10_000, buckets=buckets)) == exact_top(codes[:5], 10_000)  # all of them


def test_same_vocabulary_as_scikit_learn_where_no_tie_sits_at_the_cut():
    codes = corpus(400, seed=5)
    analyze = sklearn_vectorizer().build_analyzer()
    counts = sorted(Counter(g for c in codes for g in analyze(c)).values(), reverse=True)
    k = next(i for i in range(300, 1000) if counts[i - 1] > counts[i])  # a cut between two counts
    ours = TfidfSvdFeaturizer(max_features=k, svd_components=20)
    ours.fit_transform(codes)
    theirs = sklearn_vectorizer(max_features=k).fit(codes)
    assert ours.vocabulary == sorted(theirs.vocabulary_)
    # the same TF-IDF weights (smoothed idf, l2 rows), column for column
    mine = ours.transformer.transform(ours.vectorizer.transform(codes))
    assert abs(mine - theirs.transform(codes)).max() < 1e-6


def test_svd_components_are_the_exact_right_singular_vectors():
    codes = corpus(400, seed=9)
    f = TfidfSvdFeaturizer(max_features=400, svd_components=30)
    Z = f.fit_transform(codes)
    X = f.transformer.transform(f.vectorizer.transform(codes))
    exact = TruncatedSVD(30, algorithm="arpack").fit(X)
    cosines = np.abs(np.sum(exact.components_ * f.components_, axis=1))
    assert cosines.min() > 0.999, cosines.min()
    assert np.allclose(np.abs(Z), np.abs(exact.transform(X)), atol=1e-3)
    # sign convention: each component's largest entry is positive
    assert (f.components_[np.arange(30), np.abs(f.components_).argmax(axis=1)] > 0).all()


@pytest.mark.parametrize("rank", [60, 10])
def test_fewer_rows_than_features_give_the_same_singular_vectors(rank):
    """60 rows of 200 features: the row-side path (X X^T) gives numpy's exact right singular
    vectors; with rank 10 below the 20 asked, the vectors past the rank are X^T X's, as before."""
    from aicd.features.tfidf import _from_row_gram, right_singular_vectors

    rng = np.random.default_rng(4)
    base = sp.random(rank, 200, density=0.2, random_state=5, format="csr")
    X = sp.csr_matrix(base[rng.integers(0, rank, 60)] if rank < 60 else base)
    got = right_singular_vectors(X, 20)
    assert (_from_row_gram(X, 20) is None) == (rank < 20)  # the row-side path taken where it defines them all
    _, values, vt = np.linalg.svd(X.toarray())
    shown = min(20, int((values > 1e-8).sum()))
    cosines = np.abs(np.sum(got[:shown] * vt[:shown], axis=1))
    assert cosines.min() > 1 - 1e-9, cosines
    assert np.allclose(got @ got.T, np.eye(20), atol=1e-8)  # orthonormal, the null-space ones too
    assert (got[np.arange(20), np.abs(got).argmax(axis=1)] > 0).all()


def test_threads_change_nothing(monkeypatch):
    # Smaller chunks than the job's (20,000 and 5,000 rows), so that 1,200 rows still span
    # several chunks in every pass, the first included, and the workers share each pass.
    monkeypatch.setattr(tfidf, "HASH_CHUNK", 600)
    monkeypatch.setattr(tfidf, "CHUNK", 100)
    one = TfidfSvdFeaturizer(max_features=300, svd_components=20)
    two = TfidfSvdFeaturizer(max_features=300, svd_components=20)
    two.threads = 2
    codes = corpus(1_200, seed=2)
    assert np.array_equal(one.fit_transform(codes), two.fit_transform(codes))
    assert one.vocabulary == two.vocabulary
    assert np.array_equal(one.transform(codes[:50]), two.transform(codes[:50]))


def test_case_and_punctuation_are_kept():
    f = TfidfSvdFeaturizer(max_features=50, svd_components=5, seed=0)
    f.fit_transform(["The the foo(x); foo(x);"] * 3 + ["bar Bar"] * 3)
    assert {"The", "the", "foo(x);", "bar", "Bar"} <= set(f.vocabulary)


def test_fitted_on_train_only():
    f = TfidfSvdFeaturizer(max_features=100, svd_components=10, seed=0)
    f.fit_transform(corpus(200))
    before = list(f.vocabulary)
    out = f.transform(["UNSEEN_TOKEN only here"])
    assert f.vocabulary == before and "UNSEEN_TOKEN" not in before
    assert out.shape == (1, 10)


def test_deterministic():
    a = TfidfSvdFeaturizer(max_features=300, svd_components=20, seed=7).fit_transform(corpus(300))
    b = TfidfSvdFeaturizer(max_features=300, svd_components=20, seed=8).fit_transform(corpus(300))
    assert np.array_equal(a, b)  # the SVD is exact: no random choice is left


def test_a_featurizer_pickled_by_the_earlier_version_still_transforms():
    """Models fitted before (a TfidfVectorizer and a TruncatedSVD inside) keep working."""
    import pickle

    codes = corpus(200)
    old = TfidfSvdFeaturizer.__new__(TfidfSvdFeaturizer)
    old.__dict__.update(max_features=100, svd_components=10, seed=0,
                        vectorizer=sklearn_vectorizer(max_features=100).fit(codes))
    old.__dict__["svd"] = TruncatedSVD(10, random_state=0).fit(old.vectorizer.transform(codes))
    expected = old.svd.transform(old.vectorizer.transform(codes[:20]))
    state = dict(old.__dict__)

    class Legacy:  # pickles with the earlier attribute set
        def __reduce__(self):
            return (object.__new__, (TfidfSvdFeaturizer,), state)

    revived = pickle.loads(pickle.dumps(Legacy()))
    assert np.allclose(revived.transform(codes[:20]), expected, atol=1e-5)
    assert revived.feature_names == [f"svd_{i}" for i in range(10)]
