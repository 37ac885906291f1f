"""The built-in catalog: one module per operator family, each exposing SPECS.

Installed as the ``opsweep.specs`` package; ``excluded.py`` holds the aten
rows that have no attributable graph, each with a reason."""
