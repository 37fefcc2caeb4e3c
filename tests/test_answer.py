"""hiqa.answer: context blocks, citation checks, extractive mode and streaming from a real server."""

from __future__ import annotations

import pytest
from llm_server import MODEL_ALIAS, ScriptedServer

from hiqa.answer import (
    EXTRACTIVE_NOTE,
    NO_EVIDENCE,
    answer,
    answer_stream,
    build_context,
    build_messages,
    parse_citations,
)
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
