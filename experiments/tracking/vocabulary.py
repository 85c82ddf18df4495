"""The words loclab writes into MLflow, defined once: every tag it sets (its own `loclab.*` and the
`mlflow.*` ones the UI reads), the kinds of run it makes, the kinds of report, and the sections its
metrics and params are grouped under. Everything that writes a run and everything that reads one back
(the analysis commands, the UI's views, `scripts/ui_check.py`) names them from here, so a renamed tag
cannot leave a reader searching for the old one (`tests/experiments/tracking/test_vocabulary.py`
refuses a tag spelt out anywhere else)."""

from __future__ import annotations

from enum import StrEnum


class RunKind(StrEnum):
    """`Tag.KIND`: what a run is. A sweep's and a search's children are jobs; a job's children are tasks."""

    JOB = "job"
    TASK = "task"
    SWEEP = "sweep"  # a Hydra multirun's parent
    SEARCH = "search"  # an Optuna search's parent (experiments.analysis.search); its trials are jobs
    REPORT = "report"  # an analysis command's output, in the `-reports` experiment


class ReportKind(StrEnum):
    """`Tag.REPORT`: which analysis command wrote a report run."""

    COMPARE = "compare"
    CALIBRATE = "calibrate"
    PARETO = "pareto"
    REPEATABILITY = "repeatability"


class Tag(StrEnum):
    """Every `loclab.*` run tag."""

    KIND = "loclab.kind"  # a RunKind
    STAGE = "loclab.stage"  # a job's stage: localize, render or score
    ERROR = "loclab.error"  # why a run ended FAILED or KILLED, redacted
    # what a job ran and on what
    LOCATOR = "loclab.locator"
    DATASET = "loclab.dataset"
    OVERRIDES = "loclab.overrides"  # the command line's overrides, redacted
    TASK_ID = "loclab.task_id"  # a task run's task
    MANIFEST_HASH = "loclab.manifest_blake3"  # the task set's content hash (a job's, or the arms' of a report)
    MANIFEST_SOURCE = "loclab.manifest_source"
    SPLITS = "loclab.splits"  # a job's task splits, comma-separated (dev,test): what calibrate chooses and reports on
    # what binds a job's results (experiments.job.identity)
    RUN_KEY = "loclab.run_key"  # the results' content address
    JOB_KEY = "loclab.job_key"  # the job's identity in a sweep: a resumed sweep skips a FINISHED one
    CODE_IDENTITY = "loclab.code_identity"
    CODE_DIRTY = "loclab.code_dirty"
    GIT_REVISION = "loclab.git_revision"
    DEPENDENCIES = "loclab.dependencies"
    PYTHON = "loclab.python"
    SYSTEM_ONE_IDENTITY = "loclab.system_one_identity"
    DECIDED_BY = "loclab.decided_by"  # the System One backend that decided, beside every number
    REVIEWER = "loclab.reviewer"  # the blind review's evaluator
    PRODUCER = "loclab.producer"
    REUSED_RESULT = "loclab.reused_result"
    RESULTS_DIR = "loclab.results_dir"
    RESULTS_PRODUCED_AT = "loclab.results_produced_at"
    TASKS_FAILED = "loclab.tasks_failed"
    CI_METHOD = "loclab.ci_method"
    CI95 = "loclab.ci95"  # a job's 95 % CI bounds, {metric: [low, high, clusters]}: a tag, so the chart view opens on means
    REPEAT_REDUCTION = "loclab.repeat_reduction"
    # where a run's process is: a run left RUNNING by a dead process is closed KILLED
    HOST = "loclab.host"
    PID = "loclab.pid"
    # a sweep and its jobs
    JOB_RUN = "loclab.job_run"  # a task run's (and a trace's) job run
    SWEEP_JOB = "loclab.sweep_job"  # a job's number in its sweep, in launch order
    SWEEP_KEY = "loclab.sweep_key"  # a sweep's identity: a rerun of the same sweep resumes it
    SWEEP_DIR = "loclab.sweep_dir"
    SWEPT = "loclab.swept"  # the keys a sweep varies, comma-separated
    PRESET = "loclab.preset"  # the experiment preset a sweep ran
    RERUN_OF = "loclab.rerun_of"  # a sweep parent's latest ended parent with the same sweep key
    SWEEP_VIEW = "loclab.sweep_view"  # a sweep parent's link (a URL fragment) to the view of its jobs
    BEST_JOB = "loclab.best_job"  # a sweep parent's best job, by run id
    BEST_CHOSEN_ON = "loclab.best_job_chosen_on"  # on which tasks the best job was chosen, in words
    COMPARE_REPORT = "loclab.compare_report"  # a sweep parent's compare report run, by run id
    SETTING = "loclab.setting"  # a trace's one tag: the job's run name, what it ran
    # an Optuna search
    SEARCH_KEY = "loclab.search_key"
    SEARCH_TRIAL = "loclab.search_trial"  # a job's trial number in its search
    SAMPLER = "loclab.sampler"
    SEED = "loclab.seed"
    # a report run
    REPORT = "loclab.report"  # a ReportKind
    REPORTED_EXPERIMENT = "loclab.reported_experiment"
    REPORTED_RUNS = "loclab.reported_runs"
    REPORTED_SWEEP = "loclab.reported_sweep"
    ARMS = "loclab.arms"
    ARM = "loclab.arm"
    REDUCTION = "loclab.reduction"  # how the arms' tasks were reduced to a shared set, in words
    REFERENCE_RUN = "loclab.reference_run"
    RULE = "loclab.rule"  # calibrate's recommendation rule
    QUALITY = "loclab.quality"  # pareto's quality metric
    COST = "loclab.cost"  # pareto's cost metric
    DETERMINISTIC_VIOLATION = "loclab.deterministic_violation"


class MlflowTag(StrEnum):
    """MLflow's own tags that loclab sets, for what the UI does with them."""

    PARENT_RUN_ID = "mlflow.parentRunId"  # nests a run under its parent in the runs table
    DESCRIPTION = "mlflow.note.content"  # the run page's description (Markdown)
    RUN_COLOR = "mlflow.runColor"  # a run's colour in every chart
    EXPERIMENT_KIND = "mlflow.experimentKind"  # an experiment tag: which workflow the UI opens it in


SHARED_VIEW_PREFIX = "mlflow.sharedViewState."  # an experiment tag per saved view of its runs table


class Section(StrEnum):
    """The chart view's sections, named so they sort in the order a reader wants them: MLflow sorts
    section names (the key's part before `/`) by code point, which put `cost` before `quality`."""

    QUALITY = "1 quality"
    REFERENCE = "1 reference"  # a compare --reference report: each arm against a reference localization (seed 000)
    SWE_EXPLORE = "1 swe_explore"  # SWE-Explore's line-budget family under its own names, beside loclab's quality
    COST = "2 cost"
    READING = "3 reading"
    FUNNEL = "4 funnel"
    PACK = "4 pack"  # the pack's claims about itself: after quality, not among it (they are 0 on most jobs)
    REVIEW = "5 review"
    REPEATS = "6 repeats"  # a job with repeats > 1: each headline metric's spread over repeats, and agreement
    TASKS = "6 tasks"
    HARNESS = "7 harness"
    SWEEP = "8 sweep"  # a sweep's parent: its job counts and its best job's headline metrics
    LANGUAGE = "9 language"  # a job's headline metrics over the tasks of each language its tasks are in


# a sweep job's swept values, params of their own that sort before every other (experiments.tracking.store.swept_params)
SWEPT_PARAM_GROUP = "0 swept"


def tag_is(tag: Tag | MlflowTag, value: str) -> str:
    """An MLflow search filter clause: the run's `tag` equals `value`."""
    escaped = str(value).replace("'", "\\'")
    return f"tags.`{tag}` = '{escaped}'"
