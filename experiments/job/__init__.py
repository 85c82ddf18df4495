"""Running a job: from a task set and a composed config to saved results, scores and one MLflow run.

`runner` drives a job's stages; `pipeline` and `production` take a task from its id to a scored result
(localization in a worker process of its own: `isolation`, under `audit`); `identity` binds every
result and decision to what made it; `record` reads a recorded job back; `config`, `overrides` and
`paths` are the YAML, its checking and where things live.
"""
