"""Evaluate & tune: the ablation ladder, degradation curve and α/β surface (paper §5, Fig. 25)."""
from __future__ import annotations

import os
import tempfile
from pathlib import Path

import plotly.express as px
import streamlit as st

from app_pages._shared import (
    current_collection,
    guarded,
    server_path,
    server_paths_allowed,
    settings,
)
from app_pages.figures import fusion_grid_figure, mark_cells
from app_pages.ui_helpers import (
    collection_keywords,
    degradation_rows,
    diagnostic_rows,
    escape_markdown,
    eval_defaults,
    fusion_method_rows,
    variants_rows,
)
from hiqa.errors import HiqaError

st.title("Evaluate & tune")


def nearest(options: list[float], value: float) -> float:
    return min(options, key=lambda o: abs(o - value))

try:
    from hiqa.eval import runner as engine
except ImportError as exc:
    st.warning(f"The evaluation engine is not available yet ({exc}).")
    st.stop()

col = current_collection(required=False)
SHIPPED_DEMO = Path(__file__).resolve().parents[1] / "data" / "demo"
DEMO = settings().demo_override or SHIPPED_DEMO  # as `hiqa demo` takes it
defaults = eval_defaults(col.documents if col is not None else {}, DEMO)
scope = col.name if col is not None else ""
keywords = collection_keywords(col.documents) if col is not None else {}
if col is not None:
    used = ", ".join(f"{src} ({len(by_doc)} documents)" for src, by_doc in keywords.items())
    st.caption(f"Evaluating for the sidebar's collection **{escape_markdown(col.name)}**: its "
               f"documents' folder, its keywords ({escape_markdown(used) or 'rule keywords only'}"
               f") and its preset weights; a preset saved below goes to it.")

with st.form("eval"):
    a, b = st.columns(2)
    paths_help = ("" if server_paths_allowed() else
                  " Without HIQA_ALLOWED_DIRS on the server: the shipped demo and uploaded "
                  "collections only.")
    corpus = a.text_input("Corpus folder", value=str(defaults.corpus or ""),
                          key=f"eval_corpus_{scope}", disabled=not server_paths_allowed(),
                          help="The labelled documents; one collection per strategy is built "
                               "from them (cached under the data dir)." + paths_help)
    questions = b.text_input("Questions JSONL", value=str(defaults.questions or ""),
                             key=f"eval_questions_{scope}", disabled=not server_paths_allowed(),
                             help='{"id", "question", "gold": [{"doc", "section"}]} per line.'
                                  + paths_help)
    upload = st.file_uploader("…or upload a questions JSONL", type=["jsonl", "json"])
    variants = st.multiselect("Variants", list(engine.VARIANTS),
                              default=["hca-dense", "hca-bm25", "hca-dense-bm25", "full"],
                              help="Each chunking strategy is indexed once; fixed/section/title "
                                   "variants index the corpus again")
    c, d, e = st.columns(3)
    with_degradation = c.toggle("Degradation curve", value=True)
    with_grid = d.toggle("Fusion methods and α/β grid", value=True)
    sizes = e.text_input("Distractor counts N", value="1,5,10,20")
    run = st.form_submit_button("Run evaluation", type="primary")

if run:
    qpath: Path | None = None
    # what the app itself holds: the shipped demo (or HIQA_DEMO_DIR's copy) and the uploads
    app_folders = (SHIPPED_DEMO, DEMO, settings().data_dir / "uploads")
    if upload is None and questions.strip():
        qpath = server_path(questions, "Questions JSONL", extra=app_folders)
    corpus_path = (server_path(corpus, "Corpus folder", extra=app_folders) if corpus.strip()
                   else None)
    tmp: Path | None = None
    if upload is not None:
        fd, name = tempfile.mkstemp(suffix=".jsonl")
        os.close(fd)
        tmp = Path(name)
        tmp.write_bytes(upload.getvalue())
        qpath = tmp
    try:
        distractors = tuple(int(x) for x in sizes.replace(" ", "").split(",") if x)
    except ValueError:
        distractors = ()
        st.error("Distractor counts must be whole numbers separated by commas.")
    if corpus_path is None:
        st.error("Choose a corpus folder.")
    elif qpath is None or not qpath.is_file():
        st.error("Choose a questions JSONL file (path or upload).")
    elif not variants:
        st.error("Choose at least one variant.")
    else:
        preset = col.preset if col is not None else {}
        bar = st.progress(0.0, text="Starting…")

        def progress(stage: str, done: int, total: int) -> None:
            bar.progress(min(done / max(total, 1), 1.0), text=f"{stage}: {done}/{total}")

        try:
            report = engine.run_eval(
                corpus_path, qpath, variants=variants,
                distractors=distractors if with_degradation else None,
                method=preset.get("method", "minmax"), alpha=preset.get("alpha", 0.5),
                beta=preset.get("beta", 0.2), settings=settings(), fusion_grid=with_grid,
                progress=progress, keywords=keywords)
        except (HiqaError, ValueError, OSError) as exc:
            bar.empty()
            st.error(f"The evaluation failed: {escape_markdown(str(exc))}")
        else:
            bar.empty()
            st.session_state["eval_report"] = {"collection": scope, "report": report}
        finally:
            if tmp is not None:
                tmp.unlink(missing_ok=True)
    if tmp is not None:
        tmp.unlink(missing_ok=True)

last = st.session_state.get("eval_report") or {}
report = last.get("report")
if not report:
    st.info("Run an evaluation to see the ablation table, the degradation curve and the α/β map.")
    st.stop()
if last.get("collection") != scope:
    st.info(f"The last evaluation was run for collection "
            f"{escape_markdown(last.get('collection') or '(none)')}; run it again for this one.")
    st.stop()

st.caption(f"{report['questions']} questions over {report['documents']} documents · "
           f"{report.get('seconds', 0)} s · fusion {report.get('method')}, "
           f"α = {report.get('alpha')}, β = {report.get('beta')}")
st.subheader("Ablation (95% bootstrap CI)")
st.dataframe(variants_rows(report), hide_index=True)

if report.get("degradation"):
    st.subheader("Degradation as the knowledge base grows")
    metric = st.radio("Metric", ["recall@5", "mrr", "log_rank"], horizontal=True,
                      key="degradation_metric")
    rows = [r for r in degradation_rows(report) if r["metric"] == metric]
    fig = px.line(rows, x="distractors", y="value", color="variant", markers=True,
                  labels={"distractors": "documents in the knowledge base (N)", "value": metric})
    sizes = sorted({r["distractors"] for r in rows})
    # a log axis labels its own minor ticks ("2 5 10 2"); label the measured sizes only
    fig.update_xaxes(type="log", tickmode="array", tickvals=sizes,
                     ticktext=[str(n) for n in sizes], minor={"showgrid": False})
    st.plotly_chart(fig, key="degradation_chart")

grid = report.get("fusion_grid")
if grid:
    st.subheader("Fusion methods at the default weights")
    st.dataframe(fusion_method_rows(report), hide_index=True)
    st.subheader("α/β sensitivity (min-max fusion)")
    metric = st.radio("Heat map of", ["log_rank", "recall@5", "mrr"], horizontal=True,
                      key="grid_metric")
    surface = grid["surface"]
    chart_state = st.session_state.get("grid_chart")
    points = (chart_state.selection.points
              if chart_state is not None and hasattr(chart_state, "selection") else [])
    if points:  # a clicked cell: the weights below follow it
        st.session_state["grid_alpha"] = float(points[0]["x"])
        st.session_state["grid_beta"] = float(points[0]["y"])
    alphas = [float(x) for x in surface["alpha"]]
    betas = [float(x) for x in surface["beta"]]
    a, b, c = st.columns(3)
    alpha = a.select_slider("α", alphas, value=nearest(alphas, st.session_state.get(
        "grid_alpha", float(report.get("alpha", 0.5)))))
    beta = b.select_slider("β", betas, value=nearest(betas, st.session_state.get(
        "grid_beta", float(report.get("beta", 0.2)))))
    method = c.selectbox("Method", list(grid.get("methods") or ["minmax"]))
    cell = (betas.index(beta), alphas.index(alpha))
    values = surface[metric]
    best_b, best_a = max(((i, j) for i in range(len(betas)) for j in range(len(alphas))),
                         key=lambda ij: (values[ij[0]][ij[1]], -ij[0], -ij[1]))
    chart, numbers = st.columns([3, 1])
    with chart:
        fig = fusion_grid_figure(grid, metric)
        # β steps are uneven (0, 0.05, … 0.5, 1): as numbers they squash the small βs into a
        # sliver at the bottom, hiding what β does; one row per β instead
        fig.update_yaxes(type="category")
        mark_cells(fig, (alpha, beta), (alphas[best_a], betas[best_b]))
        st.plotly_chart(fig, key="grid_chart", on_select="rerun", selection_mode="points")
    with numbers:  # what the weights chosen give, live, against the evaluation's own weights
        st.markdown(f"**At α = {alpha:g}, β = {beta:g}**")
        ref = (betas.index(nearest(betas, float(report.get("beta", 0.2)))),
               alphas.index(nearest(alphas, float(report.get("alpha", 0.5)))))
        for key, label in (("recall@5", "Recall@5"), ("mrr", "MRR"), ("log_rank", "Log-Rank")):
            grid_values = surface.get(key)
            if grid_values:
                now = grid_values[cell[0]][cell[1]]
                st.metric(label, f"{now:.3f}", f"{now - grid_values[ref[0]][ref[1]]:+.3f}",
                          help="against the weights the evaluation ran with")
        st.caption(f"Best {metric}: {values[best_b][best_a]:.3f} at α = {alphas[best_a]:g}, "
                   f"β = {betas[best_b]:g} (★); the current cell is framed.")
    spread = max(max(r) for r in values) - min(min(r) for r in values)
    if spread < 0.01:
        st.info(f"On these {report['questions']} questions every α/β cell scores within "
                f"{spread:.3f} {metric}: they are too easy to tell the weights apart. Load "
                "harder questions (Questions JSONL above), e.g. ones that do not name their "
                "document.", icon=":material/info:")
    st.caption("Click a cell (or pick the weights above) to see its numbers, try them in Chat "
               "or save them.")
    t, s = st.columns(2)
    if t.button("Try in Chat", icon=":material/forum:"):
        st.session_state.update({"method": method, "alpha": alpha, "beta": beta})
        if col is not None:
            st.session_state["chat_weights_for"] = col.name
        st.switch_page("app_pages/chat.py")
    if s.button("Save as the collection's preset", icon=":material/save:",
                disabled=col is None) and guarded(
            lambda: col.save_preset(method, alpha, beta) or True, "Saving failed"):
        st.success(f"Saved preset for {escape_markdown(col.name)}: {method}, α = {alpha}, "
                   f"β = {beta}.")

diag = report.get("diagnostics") or {}
if diag.get("questions"):
    st.subheader("Wrong-document diagnostics")
    st.caption(f"A segment of a wrong document outranked every gold segment in "
               f"{diag.get('wrong_doc_outranked_gold', 0)} of {len(diag['questions'])} questions "
               f"({escape_markdown(str(diag.get('variant', '')))}).")
    st.dataframe(diagnostic_rows(report), hide_index=True)
    if diag.get("confusions"):
        st.markdown("**Most confused document pairs (rank 1 from the wrong document)**")
        st.dataframe(diag["confusions"], hide_index=True)
