"""Quality–cost Pareto frontier: maximize quality, minimize cost."""

from __future__ import annotations

import pandas as pd


def pareto_front(frame: pd.DataFrame, quality: str, cost: str) -> pd.Series:
    """True for the rows no other row dominates (at least as good on both, better on one)."""
    q, c = frame[quality].to_numpy(dtype=float), frame[cost].to_numpy(dtype=float)
    front = []
    for i in range(len(frame)):
        dominated = ((q >= q[i]) & (c <= c[i]) & ((q > q[i]) | (c < c[i]))).any()
        front.append(not dominated)
    return pd.Series(front, index=frame.index, name="pareto")


def best_within_budget(frame: pd.DataFrame, quality: str, cost: str, budget: float | None):
    """The index of the row with the highest quality whose cost is within `budget` (ties to the cheaper),
    None when no row is: the recommendation rule calibrate and its search share."""
    eligible = frame if budget is None else frame[frame[cost] <= budget]
    if eligible.empty:
        return None
    return eligible.sort_values([quality, cost], ascending=[False, True]).index[0]

