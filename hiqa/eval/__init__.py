"""Evaluation (paper §4): metrics, gold rules, the runner; typed results, never figures."""
