"""Figures the pages build from the engine's typed results (the engine draws none)."""
from __future__ import annotations

from typing import Any

import plotly.graph_objects as go


def fusion_grid_figure(grid: dict[str, Any], metric: str = "log_rank") -> Any:
    """The α×β sensitivity surface (paper Fig. 25) as a plotly heat map."""
    s = grid["surface"]
    fig = go.Figure(go.Heatmap(z=s[metric], x=s["alpha"], y=[str(b) for b in s["beta"]],
                               colorscale="Viridis", colorbar={"title": metric},
                               hovertemplate="α=%{x}<br>β=%{y}<br>" + metric + "=%{z:.3f}<extra></extra>"))
    fig.update_layout(title=f"{metric} over α (dense weight) × β (keyword bonus), {s['method']}",
                      xaxis_title="α", yaxis_title="β")
    return fig

