"""Search instead of enumeration: choose which configurations of the grid to evaluate, within a budget.

``space`` turns the grid into Optuna's define-by-run parameters (one categorical per axis that
varies, conditional on the axes before it); ``strategies/`` hold one module per strategy behind
one interface; ``study`` keeps every trial in an Optuna study on SQLite in the run directory, so a
killed search resumes its trials; ``loop`` asks, evaluates (through a callable the sweep gives,
which runs the plan of stages on the validation questions) and tells until the budget is spent;
``pareto`` and ``summary`` are pure functions over the trials.
"""
