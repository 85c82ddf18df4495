"""Entry points: run, score, manifest tools."""
