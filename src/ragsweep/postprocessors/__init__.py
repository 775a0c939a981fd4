"""Postprocessors: shape the retrieved nodes of a configuration before it answers (``postprocessors:``).

One module per kind, named by its spec class's ``builder`` (``ragsweep.components``); the answer stage calls
``registry.postprocess`` right after retrieval. ``axis`` adds the postprocessor axis to the grid.
"""
