"""Segments: each document's heading tree and, per section, what HCA made of it (paper §3.2)."""
from __future__ import annotations

from pathlib import Path

import streamlit as st

from app_pages._shared import current_collection, guarded, show_figure
from app_pages.ui_helpers import (
    TreeNode,
    escape_markdown,
    filter_segments,
    markdown_around,
    section_tree,
    segment_label,
    term_paths,
    tree_label,
    visible_nodes,
)
from hiqa.augment import augmented_lead, render_path
from hiqa.errors import HiqaError
from hiqa.model import normalize_title, segment_pages_label

st.title("Segments")  # first, so the page shows before the collection opens
col = current_collection()
assert col is not None


# Where a title came from, as the title rule (docs/design.md, Design notes) orders the sources.
# (A comment, not a bare string: Streamlit's magic would print a string on the page.)
TITLE_SOURCES = {
    "metadata": "from the file's own title (metadata, <title> or front matter)",
    "title_block": "from the title block of the first page",
    "running_header": "from the running header or footer that names the document",
    "heading": "from the first top-level heading",
    "filename": "from the file name",
    "user": "corrected by hand",
    "cover page": "from the filing's cover page (company, form, period)",
}


@st.cache_data(show_spinner="Loading segments…", max_entries=8)
def load_segments(data_dir: str, name: str, generation: str) -> list:
    return col.segments()


@st.cache_data(show_spinner="Reading the document's structure…", max_entries=64)
def document_terms(source: str, content_hash: str, title: str) -> set[tuple[str, ...]]:
    """The definition terms of a document, from its source file parsed again (as
    ``hiqa structure --terms`` does), for collections whose segments predate ``Segment.kind``.
    No source file (moved, or removed after ingest): no terms are marked."""
    from hiqa.formats import load_document

    try:
        return term_paths(load_document(source).sections, title)
    except (HiqaError, OSError):
        return set()


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

ids = [s.segment_id for s in shown]
linked = st.query_params.get("segment")
if "segment" not in st.session_state and linked in by_id:  # a reload or a link: the URL's
    st.session_state["segment"] = st.session_state["clicked"] = linked
picked = st.session_state.get("segment")
if picked not in by_id or (picked not in ids and picked != st.session_state.get("clicked")):
    st.session_state["segment"] = ids[0]  # the filters left the selection out: take the best


def select(segment_id: str) -> None:
    """A click in the tree; it may pick an ancestor that the filters themselves left out."""
    st.session_state["segment"] = st.session_state["clicked"] = segment_id


tree_col, detail_col = st.columns([2, 3])
with tree_col:
    counts: dict[str, int] = {}
    for s in shown:
        counts[s.doc_id] = counts.get(s.doc_id, 0) + 1
    doc_order = list(counts)
    # one document on screen: the selector and the tree are the selected segment's document;
    # a search or a filter that leaves that document out selects its best segment instead
    current_doc = by_id[st.session_state["segment"]].doc_id
    if current_doc not in doc_order:
        st.session_state["segment"] = st.session_state["clicked"] = ids[0]
        current_doc = by_id[ids[0]].doc_id
    st.session_state["tree_doc"] = current_doc

    def open_document() -> None:
        first = next(s for s in shown if s.doc_id == st.session_state["tree_doc"])
        st.session_state["segment"] = first.segment_id

    doc_id = st.selectbox(
        "Heading tree of", doc_order, key="tree_doc", on_change=open_document,
        format_func=lambda d: f"{d} · {col.documents.get(d, {}).get('title') or d} "
                              f"({counts[d]} matching segments)")
    record = col.documents.get(doc_id, {})
    title = record.get("title") or doc_id
    source_of_title = TITLE_SOURCES.get(record.get("title_source", ""), "")
    st.caption(f"Document title: **{escape_markdown(title)}**"
               + (f" · {source_of_title}" if source_of_title else ""))
    with st.expander("Correct the title", icon=":material/edit:"):
        with st.form(f"title_form_{doc_id}", clear_on_submit=False, border=False):
            new_title = st.text_input("Title", value=title, key=f"title_{doc_id}",
                                      help="Every cascaded path of this document starts with "
                                           "it; only this document is re-embedded")
            fix, reset = st.columns(2)
            save = fix.form_submit_button("Re-embed with this title", type="primary")
            back = reset.form_submit_button("Back to the title rule",
                                            disabled="title_override" not in record)
        if save or back:
            with st.spinner("Re-augmenting and re-embedding this document…"):
                done = guarded(lambda: col.set_title(doc_id, None if back else new_title),
                               "Title not changed")
            if done is not None:
                # the document's points are new: keep showing it, at its first segment
                first = col.segments(doc_id)[0].segment_id
                st.session_state["segment"] = first
                st.rerun()
    # segments carry their node kind; a collection ingested before they did is parsed again
    terms = {tuple(normalize_title(p) for p in s.section_path)
             for s in segments if s.doc_id == doc_id and s.kind == "term"}
    if not terms:
        terms = document_terms(record.get("source", ""), record.get("hash", ""), title)
    nodes = section_tree([s for s in shown if s.doc_id == doc_id],
                         [s for s in segments if s.doc_id == doc_id],
                         {doc_id: terms}).get(doc_id, [])
    selected = by_id[st.session_state["segment"]]
    all_terms = st.toggle("Show every definition term", value=False,
                          help="Terms (options, parameters) are folded under their section; "
                               "the selected section's terms are always shown")
    open_paths = [selected.section_path, selected.section_path[:-1]]
    paginated = record.get("format") == "pdf"

    def node_button(node: TreeNode, i: int) -> None:
        """One clickable tree line: indentation by depth, an icon by kind."""
        icon = ("label" if node.kind == "term" else "description" if node.segment_ids
                else "folder")
        is_selected = selected.doc_id == node.doc_id and selected.section_path == node.path
        text = escape_markdown(tree_label(node, paginated))
        label = ("\u2003" * node.depth + f":material/{icon}: "
                 + (f"**{text}**" if is_selected else text if node.matched else f"*{text}*"))
        target = node.segment_ids[0] if node.segment_ids else None
        if target is None:  # a heading with no text of its own: select its first sub-section
            below = [n for n in nodes if n.path[:len(node.path)] == node.path and n.segment_ids]
            target = below[0].segment_ids[0] if below else None
        st.button(label, key=f"tree-{i}", type="tertiary", on_click=select,
                  args=(target,), disabled=target is None,
                  help="Heading without text of its own: its text is in the sub-sections"
                       if not node.segment_ids else None)

    with st.container(height=560, border=True, gap=None):
        for i, node in enumerate(visible_nodes(nodes, open_paths, all_terms)):
            node_button(node, i)
    st.caption(":material/folder: heading with only sub-sections · :material/description: "
               "section · :material/label: definition term · *italic*: an ancestor of a match")

    picked = st.session_state["segment"]
    st.selectbox("Section", ids if picked in ids else [picked, *ids], key="segment",
                 format_func=lambda sid: segment_label(by_id[sid]) + (
                     f" · part {by_id[sid].piece + 1}" if by_id[sid].piece else ""))

seg = by_id[st.session_state["segment"]]
st.query_params["document"] = seg.doc_id  # beside the shell's ?collection=: a link to this
st.query_params["segment"] = seg.segment_id
with detail_col:
    st.markdown(f"**Cascaded path:** {escape_markdown(render_path(seg.path) or seg.doc_title)}")
    lead = augmented_lead(seg.strategy, seg.path, seg.augmented_text)
    if lead:
        st.markdown(f"**Document lead:** {escape_markdown(lead)}",
                    help="The document's first sentence, which every segment of it carries "
                         "under its path: what the document is about")
    m1, m2, m3, m4 = st.columns(4)
    m1.metric("Level", seg.level)
    m2.metric("Pages", segment_pages_label(seg) or "–",
              help=None if segment_pages_label(seg) else
              f"{Path(seg.source).suffix or 'This'} source has no pages")
    m3.metric("Part", seg.piece + 1)
    m4.metric("Table", "yes" if seg.is_table else "no")
    if seg.is_image:
        show_figure(col, seg)
    st.markdown("**Document keywords:** " + ("; ".join(
        f"{escape_markdown(k['keyword'])} — *{escape_markdown(k['why'] or '/'.join(k['sources']))}*"
        for k in col.keywords(seg.doc_id).rows(len(col.documents))) or "none"),
        help="What tells this document apart in its collection: terms of its title, file "
             "name and top heading that at most half of the documents have (a version, a "
             "year, a name), and the expert lexicon's and the LLM's keywords. A question that "
             "names them earns the keyword bonus (β).")
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
