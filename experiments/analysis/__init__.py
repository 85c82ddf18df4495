"""Analysing recorded runs: every command here reads jobs back from MLflow (`runs`) and writes a report
run of its own. `compare` (arms side by side, paired CIs, Holm), `calibrate` and `search` (choose on
dev, report on test), `pareto`, `repeatability`, `reference` (against a reference localization),
`replay` and `replay_render` (rebuild a job from its record), `explore_export` and `compare_results`."""
