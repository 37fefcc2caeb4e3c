"""hiqa.keywords.llm: parsing, grounding, merging with sources, and calls to a real server."""

from __future__ import annotations

from pathlib import Path

import pytest
from llm_server import MODEL_ALIAS, ScriptedServer

from hiqa.errors import LLMError
from hiqa.keywords.llm import (
    MAX_KEYWORDS,
    keyword_messages,
    llm_keywords,
    parse_keywords,
)
from hiqa.keywords.rules import Keyword, merge_keywords, normalize_keyword
from hiqa.llm import CachedLLM, LLMClient, LLMConfig

TITLE = "CA-IS3722HS Dual-Channel Digital Isolator Datasheet"
FIRST_PAGE = (
    "Chipanalog Microelectronics Co., Ltd.\n"
    "The CA-IS3722HS is a high-performance dual-channel digital isolator.\n"
    "Compliant with UL 1577 and IEC 60747-17 (VDE 0884-17)."
)


def client(base_url: str) -> LLMClient:
    return LLMClient(LLMConfig(base_url=base_url, model=MODEL_ALIAS, max_retries=0))


def test_parse_strips_bullets_labels_chatter_and_inventions() -> None:
    reply = (
        "Sure! Here are the keywords:\n"
        "1. CA-IS3722HS\n"
        "- Chipanalog, UL 1577\n"
        '* "IEC 60747-17"\n'
        "Keywords: VDE 0884-17; digital isolator\n"
        "- TI ISO7721 (an equivalent part)\n"
        "- ca is3722hs\n"
    )
    found = parse_keywords(reply, f"{TITLE}\n{FIRST_PAGE}")
    assert found == (
        "CA-IS3722HS",
        "Chipanalog",
        "UL 1577",
        "IEC 60747-17",
        "VDE 0884-17",
        "digital isolator",
    )


def test_parse_limits_length_and_count() -> None:
    words = " ".join(f"w{i}" for i in range(40))
    reply = "\n".join([words, *words.split()])
    found = parse_keywords(reply, words)
    assert len(found) == MAX_KEYWORDS and found[0] == "w0"


def test_merge_records_every_source_and_dedups_by_normal_form() -> None:
    merged = merge_keywords(
        rule=["CA-IS3722HS", "Chipanalog"],
        lexicon=["ca is3722hs", "isolator"],
        llm=["CAIS3722HS", "UL 1577", "isolator"],
    )
    assert merged == (
        Keyword("CA-IS3722HS", "cais3722hs", ("rule", "lexicon", "llm")),
        Keyword("Chipanalog", "chipanalog", ("rule",)),
        Keyword("isolator", "isolator", ("lexicon", "llm")),
        Keyword("UL 1577", "ul1577", ("llm",)),
    )
    assert all(k.key == normalize_keyword(k.text) for k in merged)


def test_prompt_holds_title_and_first_page() -> None:
    system, user = keyword_messages(TITLE, FIRST_PAGE)
    assert "one keyword per line" in system["content"]
    assert user["content"].startswith(f"Title: {TITLE}\n\nFirst page:\nChipanalog")


def test_scripted_reply_end_to_end(tmp_path: Path) -> None:
    reply = "Here you go:\n- CA-IS3722HS\n- Chipanalog\n- Texas Instruments"
    with ScriptedServer(lambda messages: reply) as srv:
        llm = CachedLLM(client(srv.base_url), tmp_path)
        first = llm_keywords(TITLE, FIRST_PAGE, llm)
        second = llm_keywords(TITLE, FIRST_PAGE, llm)
        assert len(srv.requests) == 1  # the rerun is served from the cache
        assert srv.requests[0]["max_tokens"] == 128
    assert first == second == ("CA-IS3722HS", "Chipanalog")


def test_nothing_to_ask_makes_no_call(dead_url: str) -> None:
    assert llm_keywords("  ", "", client(dead_url)) == ()


def test_real_model_keywords_are_grounded(llm_server: str, dead_url: str, tmp_path: Path) -> None:
    found = llm_keywords(TITLE, FIRST_PAGE, CachedLLM(client(llm_server), tmp_path))
    assert isinstance(found, tuple) and len(found) <= MAX_KEYWORDS
    source = normalize_keyword(TITLE + FIRST_PAGE)
    for keyword in found:
        assert normalize_keyword(keyword) in source or all(
            normalize_keyword(w) in source for w in keyword.split()
        )
    # Same model and prompt: answered from the cache although the endpoint is down.
    assert llm_keywords(TITLE, FIRST_PAGE, CachedLLM(client(dead_url), tmp_path)) == found


def test_endpoint_down_raises(dead_url: str) -> None:
    with pytest.raises(LLMError, match="not reachable"):
        llm_keywords(TITLE, FIRST_PAGE, client(dead_url))
