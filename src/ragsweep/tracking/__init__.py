"""Experiment tracking: a finished run logged to MLflow (``tracking: {mlflow: URI}``, ``--mlflow``, ``ragsweep track``).

``payload`` builds what is logged from the run directory alone (pure: nothing of MLflow imported), ``mlflow_log``
writes it through MLflow's client and finds what an earlier call logged, so a rerun logs nothing twice.
"""
