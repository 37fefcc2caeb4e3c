"""Segments: each document's heading tree and, per section, what HCA made of it (paper §3.2)."""
from __future__ import annotations

import streamlit as st

from app_pages._shared import current_collection, guarded
from hiqa.segment import render_path
from hiqa.ui_helpers import (
    escape_markdown,
    filter_segments,
    markdown_around,
    pages_label,
    section_tree,
    segment_label,
    tree_label,
)

st.title("Segments")  # first, so the page shows before the collection opens
col = current_collection()
assert col is not None


@st.cache_data(show_spinner="Loading segments…", max_entries=8)
def load_segments(data_dir: str, name: str, generation: str) -> list:
    return col.segments()


segments = load_segments(str(col.settings.data_dir), col.name, col.meta["generation"])
docs = sorted({s.doc_id for s in segments})
by_id = {s.segment_id: s for s in segments}

with st.form("segment_filters"):
    a, b, c = st.columns([2, 2, 1])
    chosen_docs = a.multiselect("Documents", docs, placeholder="All documents")
    path_text = b.text_input("Path contains", placeholder="e.g. installation")
    keyword = c.text_input("Keyword", placeholder="e.g. tmp117")
    query = st.text_input("Search the segments (hybrid retrieval with the collection's preset)",
                          placeholder="a question or a few words")
    st.form_submit_button("Apply", type="primary")

shown = filter_segments(segments, documents=chosen_docs, path_text=path_text, keyword=keyword)
if query.strip():
    hits = guarded(lambda: col.search(query, k=50, doc_ids=chosen_docs or None), "Search failed")
    allowed = {s.segment_id for s in shown}
    shown = [h.segment for h in hits or [] if h.segment.segment_id in allowed]
    st.caption(f"{len(shown)} segments match the search and filters, best first.")
else:
    st.caption(f"{len(shown)} of {len(segments)} segments in {len({s.doc_id for s in shown})} "
               "documents match the filters.")

if not shown:
    st.info("No segment matches; loosen the filters.")
    st.stop()

tree_col, detail_col = st.columns([2, 3])
with tree_col:
    st.markdown("**Heading trees**")
    trees = section_tree(shown)
    for doc_id, nodes in trees.items():
        title = col.documents.get(doc_id, {}).get("title") or doc_id
        with st.expander(f"{escape_markdown(doc_id)} · {escape_markdown(title)} "
                         f"({len(nodes)} sections)", expanded=len(trees) == 1):
            st.text("\n".join(tree_label(n) for n in nodes))

    ids = [s.segment_id for s in shown]
    if st.session_state.get("segment") not in ids:
        st.session_state["segment"] = ids[0]
    st.selectbox("Section", ids, key="segment",
                 format_func=lambda sid: segment_label(by_id[sid]) + (
                     f" · part {by_id[sid].piece + 1}" if by_id[sid].piece else ""))

seg = by_id[st.session_state["segment"]]
with detail_col:
    st.markdown(f"**Cascaded path:** {escape_markdown(render_path(seg.path) or seg.doc_title)}")
    m1, m2, m3, m4 = st.columns(4)
    m1.metric("Level", seg.level)
    m2.metric("Pages", pages_label(seg.pages) or "–")
    m3.metric("Part", seg.piece + 1)
    m4.metric("Table", "yes" if seg.is_table else "no")
    tagged = col.keyword_sources(seg.doc_id)
    st.markdown("**Document keywords:** " + (", ".join(
        f"{escape_markdown(k.text)} *({'/'.join(k.sources)})*" for k in tagged) or "none"))
    raw, augmented, markdown = st.tabs(["Raw text", "Augmented text (embedded)",
                                        "Canonical Markdown"])
    with raw:
        st.code(seg.text, language=None, wrap_lines=True)
    with augmented:
        st.caption(f"Strategy `{seg.strategy}`: what the embedder and BM25 see.")
        st.code(seg.augmented_text, language=None, wrap_lines=True)
    with markdown:
        source = guarded(lambda: col.markdown(seg.doc_id), "The Markdown is not available")
        if source is not None:
            before, inside, after = markdown_around(source, seg.span)
            st.caption("The segment's span with some context before and after.")
            st.code(before, language="markdown", wrap_lines=True)
            st.code(inside or seg.text, language="markdown", wrap_lines=True)
            st.code(after, language="markdown", wrap_lines=True)
