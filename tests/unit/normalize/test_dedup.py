"""MinHash signatures and LSH deduplication: estimates track the exact Jaccard, planted near
duplicates are found, distinct programs are not merged, survivors follow the rule."""

from __future__ import annotations

import numpy as np
from aicd.normalize.dedup import cross_pairs, near_duplicates, survivors
from aicd.normalize.minhash import detection_probability, estimated_jaccard, lsh_params, shingle_hashes, signature

BANDS, ROWS = lsh_params(0.8, 128)


def exact_jaccard(a: str, b: str) -> float:
    sa, sb = set(shingle_hashes(a, 5).tolist()), set(shingle_hashes(b, 5).tolist())
    return len(sa & sb) / len(sa | sb)


def test_lsh_parameters():
    assert lsh_params(0.8, 128, 0.5) == (9, 13)  # what datasketch's MinHashLSH picks for 0.8 and 128 permutations
    assert (BANDS, ROWS) == (12, 10)  # the default leans towards recall
    assert detection_probability(0.9, BANDS, ROWS) > 0.99 > detection_probability(0.9, 9, 13)
    assert lsh_params(0.5, 128)[1] < ROWS


def test_estimates_track_exact_jaccard(trial_raw):
    codes = trial_raw["code"].tolist()[:60]
    errors = []
    for a, b in zip(codes, codes[1:]):
        edited = a.replace("=", "= ", 3) + "\n" + b[: len(b) // 4]
        errors.append(abs(estimated_jaccard(signature(a), signature(edited)) - exact_jaccard(a, edited)))
    # standard error of a 128-permutation estimate is at most 0.044
    assert np.mean(errors) < 0.05 and max(errors) < 0.2


def test_signatures_are_deterministic_and_seeded():
    code = "def f(x):\n    return x + 1\n"
    assert (signature(code) == signature(code)).all()
    assert not (signature(code, seed=1) == signature(code, seed=2)).all()


def test_planted_near_duplicates_are_found_and_nothing_else(trial_raw):
    codes = trial_raw.drop_duplicates("code")["code"].tolist()[:400]
    near = [c + "\n// one more comment line at the end\n" for c in codes[:50]]  # Jaccard ~0.9+
    sigs = np.stack([signature(c) for c in codes + near])
    labels, _stats = near_duplicates(sigs, 0.8, BANDS, ROWS)
    similar = [i for i in range(50) if exact_jaccard(codes[i], near[i]) >= 0.85]
    found = [i for i in similar if labels[i] == labels[400 + i]]
    assert len(similar) >= 30 and len(found) >= 0.95 * len(similar)  # S-curve: >= 93% at 0.85, 99% at 0.9
    # no cluster merges two of the distinct originals unless they really are near duplicates
    for i in range(400):
        for j in range(i + 1, 400):
            if labels[i] == labels[j]:
                assert estimated_jaccard(sigs[i], sigs[j]) >= 0.6


def test_a_large_bucket_costs_linear_pairs():
    sigs = np.tile(signature("int main() { return 0; }"), (2000, 1))
    labels, stats = near_duplicates(sigs, 0.8, BANDS, ROWS)
    assert len(set(labels)) == 1 and stats["candidate_pairs"] < 2 * 2000


def test_survivor_is_human_first_then_lowest_id():
    labels = np.array([0, 0, 0, 1, 1])
    priority = np.array([1, 0, 1, 1, 1])  # 0 = human
    ids = np.array(["a", "z", "b", "d", "c"])
    assert survivors(labels, priority, ids).tolist() == [False, True, False, False, True]


def test_cross_pairs_finds_leaks_between_two_sets():
    a = [f"int f{i}(int x) {{ return x * {i} + {i * 7}; }} // variant {i}" * 3 for i in range(20)]
    b = [a[3], "completely different text here with other tokens entirely"]
    pairs = cross_pairs(np.stack([signature(c) for c in a]), np.stack([signature(c) for c in b]), 0.8, BANDS, ROWS)
    assert pairs.tolist() == [[3, 0]]


def test_every_pair_of_a_small_bucket_is_compared():
    """Four rows share one band; rows 1 and 3 are copies, the others differ from both beyond
    that band. Pairing each row with its bucket's first and its neighbour only never compared
    1 with 3 (the leakage guard later found such pairs between task splits)."""
    shared = [7, 9]
    signatures = np.array([shared + [1, 2], shared + [5, 6], shared + [3, 4], shared + [5, 6]], dtype=np.uint32)
    labels, stats = near_duplicates(signatures, 0.8, bands=1, rows=2)
    assert labels[1] == labels[3] and len(set(labels)) == 3, labels
    assert stats["candidate_pairs"] == 6  # all 4 x 3 / 2 pairs of the bucket
