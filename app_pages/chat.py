"""Chat: ask, get a cited answer, inspect and re-rank the evidence live (paper §3.3–3.4)."""
from __future__ import annotations

from typing import Any

import plotly.graph_objects as go
import streamlit as st

from app_pages._shared import (
    current_collection,
    dense_status,
    guarded,
    keep,
    persistent,
    settings,
    show_figure,
    show_in_context,
)
from app_pages.ui_helpers import (
    escape_markdown,
    hits_rows,
    llm_settings_from_secrets,
    moved_count,
    rank_moves,
    raw_scores,
    render_answer,
    score_breakdown,
    source_anchor,
    source_labels,
)
from hiqa.answer.cited import answer_note, answer_stream, parse_citations
from hiqa.errors import HiqaError, LLMError
from hiqa.llm import LLMClient, LLMConfig
from hiqa.model import segment_pages_label
from hiqa.retrieve.fusion import FusionMethod, names_reorder
from hiqa.retrieve.params import DEFAULT_ALPHA, DEFAULT_BETA, DEFAULT_METHOD
from hiqa.retrieve.routes import ScopeHint

METHODS = [m.value for m in FusionMethod]
ROUTE_COLOURS = {"dense": "#4C78A8", "bm25": "#F58518", "keyword": "#54A24B", "heading": "#B279A2"}

st.title("Chat")  # first, so the page shows before the collection opens
col = current_collection()
assert col is not None
st.caption(f"Collection **{escape_markdown(col.name)}** · {len(col.documents)} documents · "
           f"{len(col)} segments")
dense_status(col)


# ------------------------------------------------------------------ LLM endpoint
@st.cache_resource(show_spinner=False)
def llm_client(base_url: str, model: str, api_key: str | None, timeout: float) -> LLMClient:
    return LLMClient(LLMConfig(base_url=base_url, model=model, api_key=api_key, timeout=timeout))


def llm() -> LLMClient | None:
    """The endpoint from HIQA_LLM_* or .streamlit/secrets.toml; None means extractive answers."""
    s = settings()
    if not s.llm_base_url:
        try:
            extra = llm_settings_from_secrets(st.secrets)
        except Exception:  # noqa: BLE001 - no secrets.toml, or an unreadable one: same as no endpoint
            extra = {}
        if extra.get("HIQA_LLM_BASE_URL"):
            from dataclasses import replace

            s = replace(s, llm_base_url=extra["HIQA_LLM_BASE_URL"],
                        llm_model=extra.get("HIQA_LLM_MODEL"),
                        llm_api_key=extra.get("HIQA_LLM_API_KEY"))
    config = LLMConfig.from_settings(s)
    if config is None:
        return None
    return llm_client(config.base_url, config.model, config.api_key, config.timeout)


# ------------------------------------------------------------------ controls
preset = col.preset
if col.preset_problem:
    st.warning(escape_markdown(col.preset_problem))
if st.session_state.get("chat_weights_for") != col.name:
    st.session_state["chat_weights_for"] = col.name
    st.session_state["method"] = preset.get("method", DEFAULT_METHOD)
    st.session_state["alpha"] = float(preset.get("alpha", DEFAULT_ALPHA))
    st.session_state["beta"] = float(preset.get("beta", DEFAULT_BETA))
st.session_state.setdefault("top_k", 5)

with st.sidebar:
    docs = sorted(col.documents)
    st.session_state["scope"] = [d for d in st.session_state.get("scope", []) if d in docs]
    st.multiselect("Scope to documents", docs, key=persistent("scope", []), on_change=keep,
                   args=("scope",), placeholder="All documents")
    if st.button("Clear chat", icon=":material/delete_sweep:"):
        st.session_state.setdefault("chat", {})[col.name] = []


def current_weights() -> tuple[str, float, float, int]:
    return (st.session_state["method"], float(st.session_state["alpha"]),
            float(st.session_state["beta"]), int(st.session_state["top_k"]))


def ranking_controls() -> None:
    """α, β, method, top-k: each change re-fuses the cached candidates (no retrieval)."""
    c1, c2, c3, c4 = st.columns([2, 3, 3, 2])
    c1.selectbox("Fusion method", METHODS, key=persistent("method", DEFAULT_METHOD),
                 on_change=keep, args=("method",),
                 help="How route scores are normalised before Eq. 2's weighted sum")
    c2.slider("α (dense vs BM25)", 0.0, 1.0, step=0.05, key=persistent("alpha", DEFAULT_ALPHA),
              on_change=keep, args=("alpha",), help="1 = dense only, 0 = BM25 only")
    beta_max = 1.0 if st.session_state["method"] == "cc" else 2.0
    st.session_state["beta"] = min(st.session_state["beta"], beta_max)
    c3.slider("β (keyword bonus)", 0.0, beta_max, step=0.05, key=persistent("beta", DEFAULT_BETA),
              on_change=keep, args=("beta",),
              help="Document evidence: the keyword bonus, named documents first and the "
                   "“breadth” column (how broadly the segment's document matches); 0 turns "
                   "them all off")
    c4.slider("Top-k", 1, 20, key=persistent("top_k", 5), on_change=keep, args=("top_k",),
              help="Segments shown and given to the answer as context")
    st.toggle("Adapt α to the question", key=persistent("adaptive", False), on_change=keep,
              args=("adaptive",),
              help="Moves α from the slider's value towards the route that singles out its "
                   "best segment more clearly (paper A.13); the reason is shown below")


history: list[dict[str, Any]] = st.session_state.setdefault("chat", {}).setdefault(col.name, [])


# ------------------------------------------------------------------ rendering
def show_sources(turn: dict[str, Any], index: int) -> None:
    cited, _ = parse_citations(turn["answer"], len(turn["context"]))
    st.markdown("**Sources**")
    labels = source_labels(turn["context"])
    for n, (seg, label) in enumerate(zip(turn["context"], labels), 1):
        st.markdown(f'<div id="{source_anchor(index, n)}"></div>', unsafe_allow_html=True)
        mark = " · cited" if n in cited else ""
        # a citation link jumps here: the sources it cites are open, showing where the
        # passage sits (the PDF page, highlighted) beside its text
        with st.expander(escape_markdown(label) + mark, expanded=n in cited):
            st.caption(f"Document: {escape_markdown(seg.doc_id)}")
            if seg.is_image:
                show_figure(col, seg)
            st.text(seg.text)
            show_in_context(seg, segment_pages_label(seg) or label, f"{index}_{n}")


def show_answer(turn: dict[str, Any], index: int) -> None:
    if turn.get("note_first"):
        st.caption(escape_markdown(turn["note_first"]))
    st.markdown(render_answer(turn["answer"], len(turn["context"]), index))
    if turn.get("note"):
        st.caption(escape_markdown(turn["note"]))
    if turn.get("error"):
        st.error(escape_markdown(turn["error"]))
    show_sources(turn, index)


def offer_scope(question: str, hint: ScopeHint | None) -> None:
    """The documents a question that names none may mean, each a button that asks it again
    within that document (the sidebar's scope)."""
    if hint is None:
        return
    st.info(escape_markdown(hint.message()), icon=":material/travel_explore:")
    for column, doc_id, title in zip(st.columns(len(hint.doc_ids)), hint.doc_ids, hint.titles,
                                     strict=True):
        label = escape_markdown(title)
        if column.button(f"Ask within {label}", key=f"within_{doc_id}", width="stretch",
                         help=f"Ask again within {label} ({escape_markdown(doc_id)})"):
            st.session_state["scope"] = [doc_id]
            st.session_state["pending_question"] = question
            st.rerun()


@st.fragment
def show_evidence(turn: dict[str, Any]) -> None:
    """The latest question's candidates re-fused with the current controls (no new retrieval).

    A fragment: moving a control reruns only this panel, not the chat history and the shell.
    """
    st.subheader("Retrieved segments")
    ranking_controls()
    weights = current_weights()
    result = turn["result"]
    method, alpha, beta, k = weights
    adaptive = bool(st.session_state.get("adaptive", False))
    try:
        if adaptive:
            chosen = result.weights(alpha, beta)
            alpha, beta = chosen.alpha, chosen.beta
            st.caption(chosen.reason)  # our own words and numbers, no document text
        hits = result.rank(method, alpha, beta, k)
    except ValueError as exc:
        st.error(str(exc))
        return
    ids = [h.segment.segment_id for h in hits]
    # moves are counted against the ranking the answer above was written from: a change made
    # of several small steps (keyboard presses on a slider) is still seen as the change it is
    answered = turn.get("answered") or ids
    moves = rank_moves(answered, ids)
    st.caption(f"{len(result.candidates)} candidates re-fused with {method}, α = {alpha:.2f}, "
               f"β = {beta:.2f}, top {k}; {moved_count(moves)} moved since the answer "
               f"(↑/↓: places gained or lost). "
               f"Retrieval took {sum(result.timings.values()) * 1000:.0f} ms.")
    pending = result.dense_pending_note()
    if pending:
        st.warning(escape_markdown(pending), icon=":material/hourglass_top:")
    if set(ids) != set(answered):
        left, right = st.columns([4, 1], vertical_alignment="center")
        left.warning("The answer above was written from other evidence than the table shows "
                     "now.", icon=":material/history:")
        if right.button("Answer again from this evidence", key="answer_again", type="primary"):
            st.session_state["answer_again_with"] = (method, alpha, beta, k)
            st.rerun()
    named = result.named_document
    if named is not None and beta > 0:
        title = col.documents.get(named, {}).get("title") or named
        said = ", ".join(f"“{escape_markdown(k)}”" for k in result.names_of(named))
        st.caption(f"The question names **{escape_markdown(title)}** (by {said}): its segments "
                   "come first. Set β to 0 to rank every document alike.")
    if result.not_names and beta > 0:
        st.caption(" ".join(escape_markdown(w.message()) + "." for w in result.not_names)
                   + " Its document gets the keyword bonus only.")
    if result.latest is not None and beta > 0:
        st.caption(escape_markdown(result.latest_note()))
    if result.asked_statements:
        st.caption(escape_markdown(result.statements_note()))
    if names_reorder(result.candidates, beta):
        st.caption(f"The question names a document: its segments are ordered among the places "
                   f"they hold by the whole question and by “"
                   f"{escape_markdown(result.candidates.unnamed_query)}”; the fused scores are "
                   "the whole question's.")
    if any(h.contributions.get("heading", 0.0) > 0 for h in hits):
        st.caption("Inside the named document, a section whose own heading holds the question's "
                   "words gets the heading bonus (the “heading” column).")
    offer_scope(turn["question"], result.scope_hint(hits))
    # full width: at 1,400 px a table beside the chart hid the route columns behind a scrollbar
    st.table(hits_rows(hits, moves, escape=True, raw=False), hide_index=True)
    with st.expander("Raw route scores (before normalisation)"):
        st.dataframe([{"rank": h.rank, "document": h.segment.doc_id, **raw_scores(h)}
                      for h in hits], hide_index=True)
    rows = score_breakdown(hits)
    if rows:
        fig = go.Figure()
        for route, colour in ROUTE_COLOURS.items():
            part = [r for r in rows if r["route"] == route]
            fig.add_trace(go.Bar(x=[r["share"] for r in part], y=[r["segment"] for r in part],
                                 name=route, orientation="h", marker_color=colour,
                                 customdata=[r["fused"] for r in part],
                                 hovertemplate="%{y}<br>" + route + " %{x:.3f} of fused "
                                               "%{customdata:.3f}<extra></extra>"))
        fig.update_layout(barmode="stack", height=90 + 30 * len(hits),
                          yaxis={"autorange": "reversed", "title": None},
                          xaxis_title="fused score (stacked route shares)",
                          margin={"l": 0, "r": 0, "t": 10, "b": 0}, legend_title=None)
        st.plotly_chart(fig, key="score_chart", config={"displayModeBar": False})


for i, turn in enumerate(history):
    with st.chat_message("user"):
        st.text(turn["question"])
    with st.chat_message("assistant"):
        show_answer(turn, i)

def answer(question: str, result: Any, weights: tuple[str, float, float, int],
           again: bool = False) -> None:
    """Write the answer to ``question`` from ``result`` ranked with ``weights`` into the chat
    (streamed from the LLM, or extractive at once), and keep it in the history."""
    method, alpha, beta, k = weights
    hits = result.rank(method, alpha, beta, k)
    context = col.answer_context([h.segment for h in hits], question)
    turn = {"question": question, "result": result, "context": context, "answer": "",
            "note": "", "error": "", "answered": [h.segment.segment_id for h in hits]}
    if again:
        turn["note_first"] = (f"Answered again from the evidence re-ranked with {method}, "
                              f"α = {alpha:.2f}, β = {beta:.2f}; the earlier answer is above.")
    placeholder = st.empty()
    client = None
    try:
        client = llm()
    except LLMError as exc:
        turn["error"] = f"{exc} Answering extractively instead."
    try:
        embedder = None if client else guarded(lambda: col.embedder,
                                               "The embedder could not be loaded")
        for piece in answer_stream(question, context, client, embedder):
            turn["answer"] += piece
            placeholder.markdown(render_answer(turn["answer"], len(context),
                                               len(history)) + " ▌")
        valid, invalid = parse_citations(turn["answer"], len(context))
        turn["note"] = answer_note("llm" if client else "extractive", client,
                                   len(context), valid, invalid)
    except HiqaError as exc:
        turn["error"] = (f"The answer could not be generated: {exc}. The retrieved "
                         "evidence is below.")
    placeholder.empty()
    history.append(turn)
    show_answer(turn, len(history) - 1)


question = st.chat_input("Ask a question about the documents")
question = question or st.session_state.pop("pending_question", None)  # "Ask within" buttons
again = st.session_state.pop("answer_again_with", None)
if again is not None and history:
    last = history[-1]
    with st.chat_message("user"):
        st.text(last["question"])
    with st.chat_message("assistant"):
        answer(last["question"], last["result"], again, again=True)
elif question:
    with st.chat_message("user"):
        st.text(question)
    with st.chat_message("assistant"):
        scope = st.session_state["scope"] or None
        with st.spinner("Retrieving…"):
            result = guarded(lambda: col.retrieve(question, doc_ids=scope), "Retrieval failed")
        if result is not None:
            answer(question, result, current_weights())

if history:
    st.divider()
    show_evidence(history[-1])
else:
    ranking_controls()  # set the weights before the first question
    if not question:
        st.info("Ask a question below. The answer cites numbered segments; the evidence table and "
                "score chart let you re-weight the routes without searching again.")
