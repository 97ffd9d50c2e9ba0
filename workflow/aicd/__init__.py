"""AICD Bench reproduction: one subpackage per workflow stage.

Stage order (no stage imports a later one): sources -> splits -> features -> detectors
-> scoring -> report. Shared helpers: schema, families, io, errors, cli, config.
"""

__version__ = "0.1.0"
