"""results/report.md's test-subset section: one-class subsets said to be, inferred subsets
marked, what the release cannot recover named with the reason, provisional label maps."""

from aicd.report.subsets import subset_section
from aicd.splits.release_language import not_recoverable


def test_subset_section_marks_one_class_inferred_unrecoverable_and_provisional():
    task_reports = {
        "binary": {"test_subsets": {
            "seen_language_seen_domain": {"rows": 10, "target": {"human": 5, "machine": 5}, "one_class": None},
            "unseen_language_unseen_domain": {"rows": 4, "target": {"human": 4}, "one_class": "human"}}},
        "T1": {"test_subsets": {"seen_language": {"rows": 6, "target": {"human": 3, "machine": 3}, "one_class": None}},
               "subset_notes": {"inferred": {"subset": "from identified languages", "language": "langid"},
                                "not_recoverable": {"domain": not_recoverable("domain")}},
               "language_identification": {"test": {"rows": 6, "identified": 6, "from_cache": 2, "computed": 4,
                                                    "ms_per_row": 5.1, "low_margin": 0}}},
        "T3": {"test_subsets": {}, "subset_notes": {"not_recoverable": {"source": not_recoverable("source")}}},
    }
    scores = {"by": {"subset": {"seen_language": {"macro_f1": 0.5, "n": 6}},
                     "language": {"Go": {"macro_f1": 0.25, "n": 2},
                                  "Python": {"macro_f1": 1.0, "n": 4, "one_class": "human",
                                             "per_class": {"human": {"recall": 0.75}}}}}}
    text = "\n".join(subset_section(task_reports, {"binary": "T1 Binary", "T1": "Task 1", "T3": "Task 3"},
                                    {"T1": ("LR", scores)}, {"T3": "0 human and 2 hybrid by inspection"}))
    assert "| unseen_language_unseen_domain | 4 | human 4 § **(one class: human only)** | – |" in text
    assert "Subsets holding one class (unseen_language_unseen_domain)" in text
    assert "| seen_language (inferred) | 6 | human 3 §, machine 3 § | 50.00§ |" in text
    assert ("Per language (identified by aicd.normalize.langid), LR, macro-F1 × 100: Go 25.00 (n = 2), Python "
            "(n = 4, **one class: human**; human recall 75.00).") in text  # a one-class slice's macro-F1 is never printed
    assert "One class: that language's test rows hold one gold class" in text
    assert "not recoverable from the release, **domain**: the release has no domain" in text
    assert "not recoverable from the release, **source**" in text
    assert "6 of 6 rows (2 from the cache, 4 identified now;" in text and "ms per row" not in text  # no time: same bytes
    assert "**label map provisional**: 0 human and 2 hybrid by inspection" in text
    assert "No test subsets" in text.split("### Task 3")[1]


def test_a_one_class_subset_shows_its_recall_and_a_small_class_is_marked():
    reports = {"T1": {"test_subsets": {
        "unseen_language_unseen_domain": {"rows": 336, "target": {"human": 336}, "one_class": "human"},
        "unseen_language_seen_domain": {"rows": 153, "target": {"human": 14, "machine": 139}, "one_class": None}}}}
    scores = {"by": {"subset": {
        "unseen_language_unseen_domain": {"macro_f1": 0.4, "n": 336, "one_class": "human",
                                          "per_class": {"human": {"recall": 0.3125, "support": 336}}},
        "unseen_language_seen_domain": {"macro_f1": 0.8286, "n": 153,
                                        "per_class": {"human": {"support": 14}, "machine": {"support": 139}}}}}}
    text = "\n".join(subset_section(reports, {"T1": "T1"}, {"T1": ("Robust", scores)}, {}))
    assert "| human 336 **(one class: human only)** | human recall 31.25 |" in text and "40.00" not in text
    assert "| unseen_language_seen_domain | 153 | human 14 §, machine 139 | 82.86§ |" in text
    assert "concludes nothing" in text
