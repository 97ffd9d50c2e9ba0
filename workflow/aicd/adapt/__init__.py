"""Detection adapted to the user's own code: machine counterparts of their human reference,
written by the local model (counterparts), the rewrite distance (rewrite_distance), and the
fusion that adds an adapted part to a fitted fused detector without letting it overturn the
LM's ranking (fusion). `aicd detect --calibrate-on REF --adapt` is the command (docs/calibration.md)."""
