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



def mark_cells(fig: go.Figure, current: tuple[float, float], best: tuple[float, float]) -> None:
    """The heat map's current cell (an open square) and its best cell (a star): β is the
    category axis, so cells are placed by its label."""
    fig.add_trace(go.Scatter(x=[best[0]], y=[str(best[1])], mode="markers", name="best",
                             marker={"symbol": "star", "size": 16, "color": "white",
                                     "line": {"width": 1.5, "color": "black"}},
                             hovertemplate="best: α=%{x}, β=%{y}<extra></extra>"))
    fig.add_trace(go.Scatter(x=[current[0]], y=[str(current[1])], mode="markers",
                             name="current",
                             marker={"symbol": "square-open", "size": 26, "color": "#D62728",
                                     "line": {"width": 3}},
                             hovertemplate="current: α=%{x}, β=%{y}<extra></extra>"))
    fig.update_layout(showlegend=False)
