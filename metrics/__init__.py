"""Scoring: pure functions of a saved result and its gold, and their aggregates."""
