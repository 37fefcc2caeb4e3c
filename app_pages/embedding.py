"""Embedding space: the same segments without and with HCA, and how well documents separate (§7.1)."""
from __future__ import annotations

import math
import time
from typing import Any

import numpy as np
import plotly.graph_objects as go
import streamlit as st

from app_pages._shared import current_collection, guarded, keep, persistent, process_lock
from app_pages.ui_helpers import (
    STYLES,
    escape_markdown,
    label_styles,
    plot_label,
    projection_cache_path,
    robust_range,
    section_key,
    segment_label,
)
from hiqa.eval.projection import (
    knn_purity,
    load_cached,
    pca_fit,
    place_points,
    save_cached,
    silhouette_by_document,
    stratified_sample,
    umap_2d,
)

st.title("Embedding space")  # first, so the page shows before the collection opens
col = current_collection()
assert col is not None
st.caption("Each point is a segment. Left: its text alone (`content` vector); right: with the "
           "cascaded path (HCA, `hca` vector). HCA should pull each document's segments together "
           "and apart from the homologous sections of sibling documents.")

if len(col) == 0:
    st.info("This collection has no segments yet.")
    st.stop()


SAMPLE = 600
"""Segments drawn by default: every document in proportion (``stratified_sample``), so the
first look costs seconds of embedding, not the whole collection's half hour."""


@st.cache_resource(show_spinner=False, max_entries=4)
def vectors(data_dir: str, name: str, generation: str, stamp: int) -> dict[str, Any]:
    """Both named vectors as stored, rows by segment id (shared by all sessions); ``stamp``
    changes when content vectors were added."""
    segs_h, hca = col.vectors("hca")
    segs_c, content = col.vectors("content")
    return {"segments": segs_h, "hca": hca, "content": content,
            "content_row": {s.segment_id: i for i, s in enumerate(segs_c)}}


key = (str(col.settings.data_dir), col.name, col.meta["generation"])
stored = vectors(*key, st.session_state.get("content_stamp", 0))
total = len(stored["segments"])
everything = st.toggle(
    f"All {total:,} segments", key=persistent("embed_all", False), on_change=keep,
    args=("embed_all",), disabled=total <= SAMPLE,
    help=f"By default the maps and numbers are drawn on {SAMPLE} segments, every document in "
         "proportion; all of them takes one more embedding of every segment's text the first "
         "time (the 'without HCA' vector)")
rows = (list(range(total)) if everything else
        stratified_sample([seg.doc_id for seg in stored["segments"]], SAMPLE))
missing = [stored["segments"][i].segment_id for i in rows
           if stored["segments"][i].segment_id not in stored["content_row"]]
if missing:
    bar = st.progress(0.0, text=f"Embedding {len(missing):,} segments without their path…")
    started = time.monotonic()

    def embedding_progress(done: int, todo: int) -> None:
        spent = time.monotonic() - started
        eta = f" · about {(todo - done) * spent / done:.0f} s left" if done and spent > 1 else ""
        bar.progress(done / max(todo, 1),
                     text=f"Embedding without the path: {done:,} of {todo:,}{eta}")

    with process_lock(f"content::{key[0]}::{col.name}"):
        guarded(lambda: col.ensure_content_vectors(embedding_progress, ids=missing),
                "Embedding the plain segment text failed")
    bar.empty()
    st.session_state["content_stamp"] = st.session_state.get("content_stamp", 0) + 1
    stored = vectors(*key, st.session_state["content_stamp"])
rows = [i for i in rows if stored["segments"][i].segment_id in stored["content_row"]]
if not rows:
    st.stop()
data = {"segments": [stored["segments"][i] for i in rows], "hca": stored["hca"][rows],
        "content": stored["content"][[stored["content_row"][stored["segments"][i].segment_id]
                                      for i in rows]]}
if len(rows) < total:
    st.caption(f"Drawn on a sample of {len(rows):,} of the {total:,} segments, every document in "
               "proportion to its size (one at least), spread through it; the numbers below are "
               "the sample's. Switch on “All segments” for every one.")

segments = data["segments"]
doc_labels = [s.doc_id for s in segments]

c1, c2, c3 = st.columns([1, 1, 1])
method = c1.radio("Projection", ["PCA", "UMAP"], horizontal=True,
                  help="UMAP is slower; its layout is cached per collection")
colour = c2.radio("Colour by", ["document", "section name"], horizontal=True)
k = c3.slider("k for k-NN purity", 2, 30, 10)


def layout(vector: str) -> tuple[np.ndarray, Any]:
    """2-D coordinates and a function placing new vectors on the same map."""
    matrix = data[vector]
    if method == "PCA":
        fit = pca_fit(matrix)
        return fit.transform(matrix), fit.transform
    path = projection_cache_path(col.dir, vector, "umap", col.meta["generation"])
    ids = [s.segment_id for s in segments]
    coords = load_cached(path, ids)
    if coords is None:
        bar = st.progress(0.0, text=f"UMAP of the {vector} vectors: importing umap…")
        steps = {0: "importing umap…", 1: "fitting…", 3: "done"}
        coords = umap_2d(matrix, lambda d, t: bar.progress(
            d / t, text=f"UMAP of the {vector} vectors: {steps.get(d, '')}"))
        save_cached(path, ids, coords)
        bar.empty()
    return coords, lambda q: place_points(matrix, coords, q)


# the current question and its top-k, from the latest Chat turn on this collection
history = st.session_state.get("chat", {}).get(col.name, [])
question = history[-1]["question"] if history else ""
top_ids: list[str] = []
qvec = None
if question:
    turn = history[-1]
    top_ids = [h.segment.segment_id for h in turn["result"].rank(
        st.session_state.get("method", "minmax"), float(st.session_state.get("alpha", 0.5)),
        float(st.session_state.get("beta", 0.2)), int(st.session_state.get("top_k", 5)))]
    qvec = guarded(lambda: np.asarray(col.embedder.embed_query(question)), "Embedding failed")
    st.caption(f"Overlaid: the last Chat question ({escape_markdown(question[:120])}) "
               f"and its top {len(top_ids)}.")
else:
    st.caption("Ask a question in Chat to see it and its top-k on the maps.")

labels = doc_labels if colour == "document" else [section_key(s) for s in segments]
names = sorted(set(labels))
highlight = st.multiselect(
    f"Highlight {'documents' if colour == 'document' else 'sections'}", names,
    key=f"highlight_{colour}", placeholder="All in colour; pick some to grey out the rest",
    help="With many documents no palette keeps every colour apart: pick the ones to compare. "
         "In the legend, a click shows one name alone and a double click shows all again.")
styles = label_styles(names, highlight)
hover = [plot_label(segment_label(s)) for s in segments]

def figure(vector: str, title: str) -> go.Figure | None:
    try:
        coords, place = layout(vector)
    except ValueError as exc:
        st.error(str(exc))
        return None
    fig = go.Figure()
    # one kind of trace for all, drawn in order, so the question and the top-k lie above the
    # points (a WebGL trace is drawn above every SVG one, whatever the order)
    trace = go.Scatter if len(segments) <= SAMPLE else go.Scattergl
    # greyed names first, so that the highlighted ones are drawn on top of them
    for n in sorted(names, key=lambda n: (not highlight or n in highlight, n)):
        idx = [i for i, lab in enumerate(labels) if lab == n]
        muted = bool(highlight) and n not in highlight
        fig.add_trace(trace(
            x=coords[idx, 0], y=coords[idx, 1], mode="markers", name=plot_label(n[:40]),
            marker={"size": 5 if muted else 8, "color": styles[n][0], "symbol": styles[n][1],
                    "opacity": 0.35 if muted else 0.85},
            text=[hover[i] for i in idx], hovertemplate="%{text}<extra></extra>",
            showlegend=not muted and len(names) <= STYLES, legendrank=names.index(n)))
    if top_ids:
        pos = {s.segment_id: i for i, s in enumerate(segments)}
        idx = [pos[t] for t in top_ids if t in pos]
        fig.add_trace(trace(
            x=coords[idx, 0], y=coords[idx, 1], mode="markers+text", name="top-k",
            text=[str(r + 1) for r in range(len(idx))], textposition="top center",
            marker={"size": 13, "color": "rgba(0,0,0,0)", "line": {"width": 2, "color": "black"}}))
    if qvec is not None:
        q = place(qvec[None, :])
        fig.add_trace(trace(x=q[:, 0], y=q[:, 1], mode="markers", name="question",
                            marker={"symbol": "star", "size": 20, "color": "black",
                                    "line": {"width": 1.5, "color": "white"}}))
    in_legend = (sum(1 for n in names if not highlight or n in highlight)
                 if len(names) <= STYLES else 0)
    # the legend sits below the map, two entries a row: grow the figure rather than the map
    # shrinking under 40 document names
    fig.update_layout(title=title, height=480 + 19 * math.ceil((in_legend + 2) / 2),
                      margin={"l": 0, "r": 0, "t": 40, "b": 0},
                      legend={"font": {"size": 10}, "orientation": "h", "y": -0.02,
                              "yanchor": "top", "itemclick": "toggleothers",
                              "itemsizing": "constant"},
                      xaxis={"showticklabels": False, "range": robust_range(coords[:, 0])},
                      yaxis={"showticklabels": False, "range": robust_range(coords[:, 1])},
                      hoverlabel={"namelength": -1})
    return fig


left, right = st.columns(2)
with left:
    fig = figure("content", "Without HCA (segment text)")
    if fig is not None:
        st.plotly_chart(fig, key="plot_content")
with right:
    fig = figure("hca", "With HCA (path + text)")
    if fig is not None:
        st.plotly_chart(fig, key="plot_hca")


@st.cache_data(show_spinner="Measuring separation…", max_entries=16)
def separation_numbers(data_dir: str, name: str, generation: str, k: int,
                       shown: int) -> dict[str, float]:
    out = {}
    for vector in ("content", "hca"):
        out[f"{vector}_silhouette"] = silhouette_by_document(data[vector], doc_labels)
        out[f"{vector}_purity"] = knn_purity(data[vector], doc_labels, k)
    return out


st.subheader("Document separation, before vs after HCA")
numbers = separation_numbers(*key, k, len(rows))
if len(set(doc_labels)) < 2:
    st.info("Separation needs at least two documents.")
else:
    m1, m2 = st.columns(2)
    m1.metric("Silhouette by document (cosine)", f"{numbers['hca_silhouette']:.3f}",
              delta=f"{numbers['hca_silhouette'] - numbers['content_silhouette']:+.3f} vs "
                    f"{numbers['content_silhouette']:.3f} without HCA")
    m2.metric(f"Same-document {k}-NN purity", f"{numbers['hca_purity']:.3f}",
              delta=f"{numbers['hca_purity'] - numbers['content_purity']:+.3f} vs "
                    f"{numbers['content_purity']:.3f} without HCA")
    st.caption("Silhouette in [-1, 1] with documents as clusters; purity = share of each "
               "segment's nearest neighbours from its own document. Higher after HCA = the "
               "paper's soft partitioning of the knowledge base.")
