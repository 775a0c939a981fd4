"""Postprocessors: shape the retrieved nodes of a configuration before it answers (``postprocessors:``).

One module per kind, registered in ``registry.REGISTRY``; the answer stage calls ``registry.postprocess``
right after retrieval. ``axis`` adds the postprocessor axis to the grid.
"""
