"""loclab's commands and the machinery behind them, in three parts.

Commands a user types: `python -m experiments.run` (localize and score), `.render` and `.score` (the
same job's later stages on saved results), `.serve_system_one`, `.manifest`, and the analysis commands
`python -m experiments.analysis.<compare|calibrate|pareto|repeatability|replay|...>`.

- `experiments.job`: running a job (stages, isolation, identity, the config);
- `experiments.tracking`: speaking MLflow (its vocabulary defined once, the sweep parent, traces, UI);
- `experiments.analysis`: reading recorded runs back and reporting on them.
"""
