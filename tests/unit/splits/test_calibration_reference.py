"""The human reference code of a task (aicd.splits.reference): the validation split's humans, the
files of a gathered source that the source did not read, and other sources' humans; never a row of
the train or test split, nor a near duplicate of one."""

import json

import pandas as pd
import pytest
from aicd.sources.build import build_source
from aicd.splits.reference import build_reference

FUNCTION = '''def {name}(values, limit={k}):
    """Return the values under the limit, doubled, in their order."""
    kept = []
    for value in values:
        if value < limit:
            kept.append(value * {k} + len(kept))
    total = sum(kept)
    return kept, total
'''


def program(k: int) -> str:
    return FUNCTION.format(name=f"collect_{k}_items", k=k)


@pytest.fixture()
def library(tmp_path):
    """A gathered source over 12 Python files, of which it reads 4 (its table)."""
    root = tmp_path / "lib"
    root.mkdir()
    for k in range(12):
        (root / f"m{k:02d}.py").write_text(program(100 + k) + f"\n\ndef extra_{k}():\n    return {k} * 3 + 1\n\n\n"
                                           f"def other_{k}(a, b):\n    c = a + b\n    d = a * b - {k}\n    "
                                           "e = c - d\n    return c, d, e\n")
    spec = {"gather": {"roots": {"Python": [str(root / "*.py")]}, "per_language": 4, "units_per_file": 1,
                       "min_lines": 3},
            "defaults": {"label": "human", "generator": "human", "domain": "general"}}
    table, _ = build_source("lib", spec, seed=5)
    return spec, table


def tables(test_code: list[str]) -> dict[str, pd.DataFrame]:
    def t(prefix, codes, targets):
        return pd.DataFrame({"id": [f"{prefix}{i}" for i in range(len(codes))], "code": codes,
                             "language": "Python", "domain": "algorithmic", "target": targets})
    return {"train": t("tr", [program(1), program(2)], ["human", "machine"]),
            "validation": t("va", [program(3), program(4), program(5)], ["human", "human", "machine"]),
            "test": t("te", test_code, ["human"] * len(test_code))}


SPEC = {"validation_humans": True, "unsplit_humans": True, "per_language": 5,
        "dedup": {"threshold": 0.8, "num_perm": 128}, "minhash": {"num_perm": 128, "shingle_size": 5, "seed": 1},
        "normalize": {"filters": {"lines_of_code": [3, 300]}}}


def test_the_reference_is_validation_humans_and_files_the_source_did_not_read(library):
    spec, source_table = library
    read = {p.rsplit("#", 1)[0] for p in source_table["source_row_id"]}
    out, report = build_reference(tables([program(50)]), {**SPEC, "library_spec": spec}, 5, "T1",
                                  library=("lib", source_table))
    validation = out[out["origin"] == "validation"]
    assert sorted(validation["id"]) == ["va0", "va1"] and set(validation["domain"]) == {"algorithmic"}
    lib = out[out["origin"] == "library:lib"]
    assert len(lib) == 5 and set(lib["domain"]) == {"general"} and set(lib["language"]) == {"Python"}
    assert report["library"]["files_of_the_source_passed_over"] == len(read) == 4
    # no reference row comes from a file the source read, nor is one of the source's rows
    assert not set(lib["id"]) & set(source_table["id"])
    assert not any(code in set(source_table["code"]) for code in lib["code"])
    assert report["rows"] == len(out) == 7 and "never in the task's train or test split" in report["rule"]
    json.dumps(report)


def test_rows_in_or_near_the_train_and_test_splits_are_dropped(library, tmp_path):
    spec, source_table = library
    read = set(source_table["source_row_id"].str.rsplit("#", n=1).str[0])
    unread = sorted(str(p) for p in (tmp_path / "lib").glob("*.py") if str(p) not in read)
    near = (tmp_path / "lib" / unread[0]).read_text().replace("len(kept)", "len(kept) + 0")  # one token more
    task = tables([near])
    task["validation"].loc[0, ["id", "code"]] = ["tr0", task["train"].loc[0, "code"]]  # a train row, also in validation
    out, report = build_reference(task, {**SPEC, "library_spec": spec, "per_language": 8}, 5, "T1",
                                  library=("lib", source_table))
    assert "tr0" not in set(out["id"]) and report["dropped"]["in_or_near_train"] == {"validation": 1}
    assert report["dropped"]["in_or_near_test"] == {"library:lib": 1}
    assert len(out[out["origin"] == "library:lib"]) == 7   # the eight unread files, less the test row's near twin


def test_other_sources_give_their_human_rows():
    other = pd.DataFrame({"id": ["o1", "o2"], "code": [program(70), program(71)], "label": ["human", "machine"],
                          "language": "Python", "domain": "algorithmic", "reject": [None, None]})
    out, report = build_reference(tables([program(50)]), {**SPEC, "validation_humans": False}, 5, "T1",
                                  sources={"course": other})
    assert list(out["id"]) == ["o1"] and list(out["origin"]) == ["source:course"]
    assert report["candidates"] == {"source:course": 1}
