"""Detection adapted to the user's own code (`aicd detect --calibrate-on REF --adapt`;
docs/calibration.md, "Adapted to your code").

- counterparts: machine counterparts of human programs written by the local model through the
  request cache (rewrite, inverse instruction, docstring), and what makes an answer one;
- reference: the reference shared between adapting (counterparts, the fitted part) and
  calibrating (the thresholds);
- fusion: the adapted fusion, the fused detector's LM and trained parts beside a part fitted on
  the reference against its counterparts, each weighted by how it separates them;
- detect: the fused model adapted for `aicd detect`, and what it says of it;
- rewrite_distance: the rewrite distance as a zero-shot criterion (Raidar);
- collections: the machine side of a collection built from human code (benchmarks/loco_adapt.py)."""
