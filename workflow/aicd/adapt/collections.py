"""The machine side of a collection built from human code: the local model's answers under the
generation protocols, as rows of the sample schema (a parquet file a `files:` source reads, like
the collections of ../shared/data).

Two collections of the leave-one-collection-out protocol are built so (config/loco_adapt.yaml,
benchmarks/loco_adapt.py): the gathered library code (nine languages) beside the local model's
implementations of its documented functions and of task statements written from it; HumanEval's
hand-written solutions beside the local model's solutions to the same prompts. Their machine
code is the local model's own, which the adapted detector's counterparts also are: a measurement
on them flatters adaptation (said wherever their figures are)."""

from __future__ import annotations

import hashlib

import pandas as pd

from ..generate.protocols import protocol_rows
from .counterparts import Writer

COLUMNS = ["id", "code", "label", "language", "domain", "source", "generator", "family", "protocol", "problem_id",
           "source_sample_id"]


def machine_side(human: pd.DataFrame, protocols: dict[str, int], writer: Writer, seed: int, source: str
                 ) -> tuple[pd.DataFrame, dict]:
    """(machine rows, report): for each protocol, `n` human rows per language (the generation
    stage's seeded order; the docstring protocol only documented ones) answered by the writer;
    answers that are not code are left out and counted (aicd.adapt.counterparts)."""
    parts, report = [], {"writer": writer.model["name"], "protocols": {}}
    for protocol, per_language in protocols.items():
        languages = human["language"].nunique()
        rows = protocol_rows({source: human}, protocol, {"n": per_language * languages, "by_language": True}, seed)
        answers = writer.write(rows, (protocol,))
        kept = answers[answers["kept"]].merge(rows[["id", "domain", "problem_id"]], left_on="reference_id",
                                              right_on="id", how="left")
        report["protocols"][protocol] = {"prompted": int(len(rows)), "kept": int(len(kept)),
                                         "left_out": answers.loc[~answers["kept"], "why"].value_counts().to_dict(),
                                         "completion_tokens": int(answers["completion_tokens"].sum())}
        parts.append(pd.DataFrame({
            "id": [row_id(writer.model["name"], protocol, r) for r in kept["reference_id"]],
            "code": kept["code"].to_numpy(), "label": "machine", "language": kept["language"].to_numpy(),
            "domain": kept["domain"].to_numpy(), "source": source, "generator": writer.model["name"],
            "family": writer.model.get("family", "other"), "protocol": protocol,
            "problem_id": kept["problem_id"].to_numpy(), "source_sample_id": kept["reference_id"].to_numpy()}))
    table = pd.concat(parts, ignore_index=True) if parts else pd.DataFrame(columns=COLUMNS)
    report["rows"] = int(len(table))
    return table[COLUMNS], report


def row_id(model: str, protocol: str, source_id: str) -> str:
    return hashlib.sha256(f"{model}\0{protocol}\0{source_id}".encode()).hexdigest()[:16]
