"""Per-job tables: the per-task frame, its aggregate, and the console summary."""

from __future__ import annotations

import pandas as pd
from rich.console import Console
from rich.table import Table

from experiments.pipeline import RESULT_FILE, TaskOutcome
from locator.result import LocalizationResult
from metrics.agent_context import owner_excerpt
from metrics.aggregate import CI_METHOD, REPEAT_REDUCTION

SUMMARY_METRICS = (
    "file_acc_all@1", "file_acc_all@5", "file_hit_any@5", "file_recall", "file_precision", "file_mrr", "file_map",
    "entity_acc_all@5", "line_recall", "line_precision", "gold_region_recall", "selected_file_recall",
    "model_calls", "physical_model_calls", "input_tokens", "output_tokens", "source_lines_read", "elapsed_ms",
    "source_tokens", "response_json_tokens", "two_turn_json_tokens",
    "pack_line_recall", "false_complete_claims", "rendered_tokens",
)


def per_task_frame(outcomes: list[TaskOutcome]) -> pd.DataFrame:
    """One row per task and repeat: status, provenance, the owner excerpt a response reserved
    (`path#symbol`, seed 001's table) and every metric."""
    rows = []
    for o in outcomes:
        result_file = o.result_dir / RESULT_FILE
        excerpt = owner_excerpt(LocalizationResult.read(result_file)) if o.status == "ok" else None
        rows.append({"task_id": o.task_id, "repository": o.repository, "split": o.split, "repeat": o.repeat,
                     "status": o.status, "reused": o.reused, "produced_at": o.produced_at,
                     "code_identity": o.code_identity, "error": o.error,
                     "result": str(result_file) if o.status == "ok" else None, "owner_excerpt": excerpt, **o.scores})
    return pd.DataFrame(rows)


def _fmt(value: float | None) -> str:
    if value is None or value != value:
        return "—"
    return f"{value:,.3f}" if abs(value) < 100 else f"{value:,.0f}"


def print_summary(title: str, aggregate: pd.DataFrame, counts: dict[str, int], console: Console | None = None) -> None:
    console = console or Console()
    table = Table(title=title, caption=f"{REPEAT_REDUCTION}; 95% CI: {CI_METHOD}")
    for column in ("metric", "mean", "95% CI", "n"):
        table.add_column(column, justify="left" if column == "metric" else "right")
    for name in SUMMARY_METRICS:
        if name not in aggregate.index:
            continue
        row = aggregate.loc[name]
        ci = f"[{_fmt(row.ci95_low)}, {_fmt(row.ci95_high)}]" if row.ci95_low is not None else "—"
        table.add_row(name, _fmt(row["mean"]), ci, str(int(row.n)))
    console.print(table)
    console.print(", ".join(f"{k}: {v}" for k, v in counts.items()))
