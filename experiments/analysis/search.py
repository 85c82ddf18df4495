"""An ask-and-tell Optuna search over a locator's knobs (`python -m experiments.analysis.calibrate --search NAME`).

A grid is right for one or two knobs; the seed's are four or more (file, action and observation
thresholds, batch size, round budgets). The search asks Optuna for a setting, runs it as one job (a
child run of the search's parent run, exactly as a sweep's jobs are), measures the job's mean quality
and cost on the choosing split, and tells Optuna both (two objectives: quality up, cost down). At the
end the parent carries every trial side by side, the Pareto set on the choosing split, the
recommended trial with its reporting-split numbers beside, and the parameter importances as a figure.

Resumable: the study lives in an Optuna SQLite store under `paths.searches_dir` and the parent is found
by the search's key (the spec, its job overrides and the store), so the same command after a kill
goes on where it stopped: a trial left RUNNING is asked again with its own values first, and its job,
if it had finished, is reused by the runner's job key instead of run twice.
"""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
import time
from enum import StrEnum
from pathlib import Path
from typing import Literal

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402
from mlflow.entities import Metric, Run  # noqa: E402
from mlflow.tracking import MlflowClient  # noqa: E402
from omegaconf import OmegaConf  # noqa: E402
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator  # noqa: E402

from experiments.analysis.runs import AnalysisError, load_arm  # noqa: E402
from experiments.job.config import compose_config  # noqa: E402
from experiments.tracking.metric_keys import logged_value, metric_key  # noqa: E402
from experiments.job.paths import PROJECT_ROOT  # noqa: E402
from experiments.tracking.store import PARENT_RUN_ENV, SWEPT_ENV, ensure_experiment, short_overrides, tracking_uri  # noqa: E402
from experiments.tracking.vocabulary import MlflowTag, RunKind, Tag, tag_is
from locator.hashing import blake3_hex, canonical_json  # noqa: E402
from metrics.pareto import best_within_budget, pareto_front  # noqa: E402

TRIALS_ARTIFACT = "search_trials.json"
IMPORTANCE_ARTIFACT = "search_importances.png"
_REUSED = re.compile(r"already finished in this sweep \(run ([0-9a-f]{32})\)")
FAILURES_IN_A_ROW = 3  # trials that fail one after another: the search stops (a setting every trial shares is wrong)


class Sampler(StrEnum):
    TPE = "tpe"
    NSGA2 = "nsga2"
    RANDOM = "random"


class Knob(BaseModel):
    """One searched setting: a float or int range, or a list of choices."""

    model_config = ConfigDict(extra="forbid")
    type: Literal["float", "int", "categorical"]
    low: float | None = None
    high: float | None = None
    log: bool = False
    choices: list[str | int | float | bool] | None = None


    @model_validator(mode="after")
    def _complete(self) -> "Knob":
        if self.type == "categorical" and not self.choices:
            raise ValueError("a categorical knob needs choices")
        if self.type != "categorical" and (self.low is None or self.high is None or self.low > self.high):
            raise ValueError(f"a {self.type} knob needs low <= high")
        return self


class SearchSpec(BaseModel):
    """A search as `conf/search/NAME.yaml` writes it (every default there)."""

    model_config = ConfigDict(extra="forbid")
    schema_version: int = 1
    job: list[str]
    space: dict[str, Knob] = Field(min_length=1)
    trials: int = Field(ge=1)
    sampler: Sampler
    seed: int
    quality: str
    cost: str
    budget: float | None = None
    choose_split: str
    report_split: str


class SearchError(AnalysisError):
    """A search that cannot start or go on: a bad spec, a store without the trials' splits."""


def load_spec(name: str, overrides: list[str]) -> SearchSpec:
    """`conf/search/NAME.yaml` with `search.*` overrides applied, validated (file and field named)."""
    path = PROJECT_ROOT / "conf" / "search" / f"{name}.yaml"
    if not path.is_file():
        known = sorted(p.stem for p in path.parent.glob("*.yaml"))
        raise SearchError(f"no search {name!r} ({path} not found); known: {', '.join(known)}")
    config = compose_config(f"search={name}", *overrides).search
    try:
        return SearchSpec.model_validate(OmegaConf.to_container(config, resolve=True))
    except ValidationError as exc:
        first = exc.errors()[0]
        raise SearchError(f"{path}: field {'.'.join(map(str, first['loc']))}: {first['msg']}") from None


def suggest(trial, spec: SearchSpec) -> dict[str, object]:
    values = {}
    for key, knob in spec.space.items():
        if knob.type == "float":
            values[key] = trial.suggest_float(key, knob.low, knob.high, log=knob.log)
        elif knob.type == "int":
            values[key] = trial.suggest_int(key, int(knob.low), int(knob.high), log=knob.log)
        else:
            values[key] = trial.suggest_categorical(key, knob.choices)
    return values


def sampler(spec: SearchSpec, trials_so_far: int):
    """The spec's sampler, seeded with its seed plus the trials the study holds: a fresh search starts
    at the seed itself, and a resumed one does not replay the values its first trials were asked (a
    sampler's random state is not kept in the study)."""
    import optuna

    return {Sampler.TPE: optuna.samplers.TPESampler, Sampler.NSGA2: optuna.samplers.NSGAIISampler,
            Sampler.RANDOM: optuna.samplers.RandomSampler}[spec.sampler](seed=spec.seed + trials_so_far)


def search_key(spec: SearchSpec, uri: str) -> str:
    """What makes two searches the same search: everything in the spec but how many trials it runs to
    (asking for more trials goes on with the same search), and the store."""
    return blake3_hex(canonical_json({"spec": spec.model_dump(mode="json", exclude={"trials"}), "store": uri}))[:16]


def _value(values: float) -> str:
    return f"{values:.6g}" if isinstance(values, float) else str(values)


def run_trial(client: MlflowClient, experiment_id: str, spec: SearchSpec, values: dict[str, object], parent_id: str,
              number: int, work: Path, store: list[str]) -> tuple[str | None, str]:
    """The trial's job, as a sweep runs one: the runner in its own process, a child of the parent, its
    job number the trial's, logging to the search's store. Returns its run id (None when it did not
    start) and what it said last."""
    argv = [sys.executable, "-m", "experiments.run", *spec.job, *(f"{k}={_value(v)}" for k, v in values.items()),
            *store, f"hydra.run.dir={work / f'trial-{number}'}", f"hydra.job.num={number}"]
    env = os.environ | {PARENT_RUN_ENV: parent_id, SWEPT_ENV: ",".join(spec.space)}
    proc = subprocess.run(argv, cwd=PROJECT_ROOT, env=env, capture_output=True, text=True)
    said = (proc.stderr if proc.returncode else proc.stdout).strip()[-800:]
    if reused := _REUSED.search(proc.stdout):  # a resumed search's trial whose job had finished
        return reused.group(1), said
    found = client.search_runs([experiment_id], f"{tag_is(MlflowTag.PARENT_RUN_ID, parent_id)} and "
                                                f"{tag_is(Tag.SWEEP_JOB, str(number))}", order_by=["attributes.start_time DESC"])
    return (found[0].info.run_id if found else None), said


def measure(client: MlflowClient, run: Run, spec: SearchSpec) -> dict[str, float]:
    """A trial's quality and cost, mean per task on each split (repeats reduced first)."""
    tasks = load_arm(client, run).task_values
    if "split" not in tasks:
        raise SearchError(f"run {run.info.run_id}: its tasks carry no split; a search chooses on "
                          f"{spec.choose_split!r} and reports on {spec.report_split!r}")
    out = {}
    for split in (spec.choose_split, spec.report_split):
        part = tasks[tasks["split"].astype(str) == split]
        if part.empty:
            raise SearchError(f"run {run.info.run_id}: no task in split {split!r} (splits: "
                              f"{sorted(tasks['split'].dropna().astype(str).unique())})")
        out |= {f"{spec.quality}[{split}]": float(part[spec.quality].mean()),
                f"{spec.cost}[{split}]": float(part[spec.cost].mean()), f"n[{split}]": len(part)}
    return out


def _parent(client: MlflowClient, experiment_id: str, spec: SearchSpec, key: str, name: str) -> str:
    """The search's parent run: the one this key left unfinished (a resumed search), else a new one."""
    found = client.search_runs([experiment_id], tag_is(Tag.SEARCH_KEY, key), order_by=["attributes.start_time DESC"])
    if found and found[0].info.status != "FINISHED":
        client.update_run(found[0].info.run_id, status="RUNNING")
        client.set_tag(found[0].info.run_id, Tag.PID, str(os.getpid()))
        return found[0].info.run_id
    tags = {Tag.KIND: RunKind.SEARCH, Tag.SEARCH_KEY: key, Tag.HOST: socket.gethostname(), Tag.PID: str(os.getpid()),
            Tag.SAMPLER: spec.sampler.value, Tag.SEED: str(spec.seed)}
    run_id = client.create_run(experiment_id, run_name=name + (f" #{len(found) + 1}" if found else ""), tags=tags).info.run_id
    # its trial count is a metric (`8 sweep/trials`): a resumed search may be asked for more
    for param, value in {"search.sampler": spec.sampler.value, "search.seed": spec.seed,
                         "search.objectives": f"max {spec.quality}, min {spec.cost} on {spec.choose_split}",
                         "search.job": " ".join(spec.job), **{f"search.space.{k}": _knob_text(v) for k, v in spec.space.items()}
                         }.items():
        client.log_param(run_id, param, str(value)[:6000])
    return run_id


def _knob_text(knob: Knob) -> str:
    if knob.type == "categorical":
        return f"one of {knob.choices}"
    low, high = (int(knob.low), int(knob.high)) if knob.type == "int" else (knob.low, knob.high)
    return f"{knob.type} [{low}, {high}]" + (" log" if knob.log else "")


def search(name: str, overrides: list[str], trials: int | None = None, db: str | None = None) -> int:
    """Runs (or resumes) the search; prints the trials, the Pareto set and the recommendation. `db`:
    the SQLite store its parent and trials log to (calibrate's --db), else the runner's."""
    import optuna

    spec = load_spec(name, overrides)
    if trials is not None:
        if trials < 1:
            raise SearchError(f"--trials is a positive number of completed trials, got {trials}")
        spec = spec.model_copy(update={"trials": trials})
    store = [f"tracking.db_path={Path(db).resolve()}"] if db else []
    cfg = compose_config(*spec.job, *store)
    uri = tracking_uri(cfg.tracking)
    experiment_id = ensure_experiment(cfg.tracking)
    client = MlflowClient(uri)
    key = search_key(spec, uri)
    work = Path(cfg.paths.searches_dir) / key
    work.mkdir(parents=True, exist_ok=True)
    parent_id = _parent(client, experiment_id, spec, key, f"search · {name} ({spec.sampler.value}, seed {spec.seed})")
    storage = f"sqlite:///{work / 'optuna.db'}"
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    held = optuna.create_study(study_name=key, storage=storage, directions=["maximize", "minimize"], load_if_exists=True)
    study = optuna.load_study(study_name=key, storage=storage, sampler=sampler(spec, len(held.trials)))
    for stale in study.get_trials(deepcopy=False, states=(optuna.trial.TrialState.RUNNING,)):
        # left by a killed search: asked again with its own values, so its job (if it finished) is reused
        study.tell(stale.number, state=optuna.trial.TrialState.FAIL)
        study.enqueue_trial(stale.params, skip_if_exists=False)
    env_uri = os.environ.get("MLFLOW_TRACKING_URI")
    os.environ["MLFLOW_TRACKING_URI"] = uri  # the trials' jobs log to the store this search reads
    failures = 0
    ended = "FAILED"  # a search that stops on an error says so; run again, it goes on where it stopped
    try:
        while (done := len(study.get_trials(deepcopy=False, states=(optuna.trial.TrialState.COMPLETE,)))) < spec.trials:
            trial = study.ask()
            values = suggest(trial, spec)
            started = time.perf_counter()
            run_id, said = run_trial(client, experiment_id, spec, values, parent_id, trial.number, work, store)
            run = client.get_run(run_id) if run_id else None
            if run is None or run.info.status != "FINISHED":
                study.tell(trial, state=optuna.trial.TrialState.FAIL)
                failures += 1
                last = next((line for line in reversed(said.splitlines()) if line.startswith("error")), said[-300:])
                print(f"trial {trial.number}: failed: {last}")
                if failures >= FAILURES_IN_A_ROW:
                    raise SearchError(f"{failures} trials failed in a row, the last: {last}")
                continue
            failures = 0
            if Tag.SEARCH_TRIAL not in run.data.tags:  # a trial asked again with values an earlier one ran keeps that run's number
                client.set_tag(run_id, Tag.SEARCH_TRIAL, str(trial.number))
            measured = measure(client, run, spec)
            for k, v in measured.items():
                trial.set_user_attr(k, v)
            trial.set_user_attr("run_id", run_id)
            study.tell(trial, [measured[f"{spec.quality}[{spec.choose_split}]"], measured[f"{spec.cost}[{spec.choose_split}]"]])
            print(f"trial {trial.number} ({done + 1}/{spec.trials}, {time.perf_counter() - started:.1f} s): "
                  + ", ".join(f"{k.split('.')[-1]}={_value(v)}" for k, v in values.items())
                  + f" -> {spec.quality} {measured[f'{spec.quality}[{spec.choose_split}]']:.3f}, "
                    f"{spec.cost} {measured[f'{spec.cost}[{spec.choose_split}]']:.0f} on {spec.choose_split}")
        record_search(client, parent_id, study, spec, name)
        ended = "FINISHED"
    except KeyboardInterrupt:
        ended = "KILLED"
        raise
    finally:
        if env_uri is None:
            os.environ.pop("MLFLOW_TRACKING_URI", None)
        else:
            os.environ["MLFLOW_TRACKING_URI"] = env_uri
        client.set_terminated(parent_id, ended)
    return 0


def trials_table(study, spec: SearchSpec) -> pd.DataFrame:
    """One row per completed trial: its values, its run, quality and cost on both splits, Pareto on the
    choosing split, and the recommendation (calibrate's rule: the best quality within the budget,
    ties to the cheaper)."""
    import optuna

    names = knob_names(list(spec.space))
    rows = [{"trial": t.number, **{names[k]: v for k, v in t.params.items()}, **t.user_attrs}
            for t in study.get_trials(deepcopy=False, states=(optuna.trial.TrialState.COMPLETE,))]
    frame = pd.DataFrame(rows).set_index("trial").sort_index().drop_duplicates("run_id")  # one row per job run
    q, c = f"{spec.quality}[{spec.choose_split}]", f"{spec.cost}[{spec.choose_split}]"
    frame[f"pareto[{spec.choose_split}]"] = pareto_front(frame, q, c)
    frame["recommended"] = frame.index == best_within_budget(frame, q, c, spec.budget)
    return frame


def knob_names(keys: list[str]) -> dict[str, str]:
    """Each knob by its last dotted part, lengthened where two would share it."""
    return {k: v.split("=", 1)[0] for k, v in zip(sorted(keys), short_overrides([f"{k}=" for k in sorted(keys)]))}


def importances(study, spec: SearchSpec) -> dict[str, dict[str, float]]:
    """Each knob's share of the variance of each objective across the completed trials (fANOVA, seeded)."""
    import optuna
    from optuna.importance import FanovaImportanceEvaluator

    out = {}
    for i, objective in enumerate((spec.quality, spec.cost)):
        try:
            out[objective] = optuna.importance.get_param_importances(
                study, evaluator=FanovaImportanceEvaluator(seed=spec.seed), target=lambda t, i=i: t.values[i])
        except (RuntimeError, ValueError) as exc:  # too few trials, or every trial the same
            print(f"importances of {objective}: not computed ({exc})")
    return out


def importance_figure(found: dict[str, dict[str, float]], title: str):
    knobs = sorted({k for values in found.values() for k in values})
    figure, axis = plt.subplots(figsize=(7, 0.5 + 0.45 * max(1, len(knobs)) * max(1, len(found))))
    height = 0.8 / max(1, len(found))
    for i, (objective, values) in enumerate(found.items()):
        axis.barh([y + i * height for y in range(len(knobs))], [values.get(k, 0.0) for k in knobs], height=height,
                  label=objective)
    names = knob_names(knobs)
    axis.set_yticks([y + height * (len(found) - 1) / 2 for y in range(len(knobs))], [names[k] for k in knobs])
    axis.set_xlabel("importance (fANOVA: share of the objective's variance)")
    axis.legend(fontsize=8)
    axis.set_title(title, fontsize=10)
    figure.tight_layout()
    return figure


def record_search(client: MlflowClient, parent_id: str, study, spec: SearchSpec, name: str) -> None:
    """What the parent's page shows: every trial, the Pareto set and the recommendation in its
    description and as a table, the recommendation's numbers on both splits as metrics, and the
    knobs' importances as a figure."""
    frame = trials_table(study, spec)
    client.log_table(parent_id, data=frame.reset_index(), artifact_file=TRIALS_ARTIFACT)
    found = importances(study, spec)
    if found:
        client.log_figure(parent_id, importance_figure(found, f"{name}: what moved {spec.quality} and {spec.cost}"),
                          IMPORTANCE_ARTIFACT)
        for objective, values in found.items():
            for knob, share in values.items():
                client.log_metric(parent_id, metric_key(f"sweep.importance_{objective}_{knob_names(list(values))[knob]}"),
                                  logged_value(share))
    front = frame[frame[f"pareto[{spec.choose_split}]"]]
    metrics = {metric_key("sweep.trials"): len(frame), metric_key("sweep.pareto_front"): len(front)}
    chosen = frame[frame.recommended]
    if len(chosen):  # as calibrate's report run logs them: `1 quality/file_recall_dev`, `…_test`
        metrics |= {f"{metric_key(metric)}_{split}": chosen.iloc[0][f"{metric}[{split}]"]
                    for metric in (spec.quality, spec.cost) for split in (spec.choose_split, spec.report_split)}
    client.log_batch(parent_id, metrics=[Metric(k, logged_value(float(v)), int(time.time() * 1000), 0) for k, v in metrics.items()])
    shown = [c for c in frame.columns if c != "run_id"]
    lines = ["| trial | " + " | ".join(shown) + " |", "|" + "---|" * (len(shown) + 1)]
    for number, row in frame.iterrows():
        lines.append(f"| {number} | " + " | ".join(_cell(row[c]) for c in shown) + " |")
    rule = f"max {spec.quality} on {spec.choose_split}" + (f" with mean {spec.cost} <= {spec.budget}" if spec.budget else "")
    best = (f"Recommended by {rule}: trial {chosen.index[0]} (run {chosen.iloc[0]['run_id']}); on {spec.report_split} "
            f"{spec.quality} {chosen.iloc[0][f'{spec.quality}[{spec.report_split}]']:.3f}, {spec.cost} "
            f"{chosen.iloc[0][f'{spec.cost}[{spec.report_split}]']:.0f}." if len(chosen) else f"No trial meets {rule}.")
    client.set_tag(parent_id, MlflowTag.DESCRIPTION, "\n".join([
        f"**Optuna search `{name}`**: {len(frame)} trials, sampler {spec.sampler.value} (seed {spec.seed}), objectives "
        f"max {spec.quality} and min {spec.cost} on {spec.choose_split}; {len(front)} on the Pareto front. {best}",
        "", *lines, "", f"The trials: `{TRIALS_ARTIFACT}`; what moved each objective: `{IMPORTANCE_ARTIFACT}`."]))
    print(f"Pareto front on {spec.choose_split}: trials {list(front.index)}")
    print(best)
    print(f"search parent run: {parent_id}")


def _cell(value) -> str:
    if isinstance(value, bool):
        return "✓" if value else ""
    if isinstance(value, float):
        return f"{value:,.0f}" if abs(value) >= 100 else f"{value:.4g}"
    return str(value)


def main_search(name: str, overrides: list[str], trials: int | None, db: str | None) -> int:
    try:
        return search(name, overrides, trials, db)
    except SearchError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
