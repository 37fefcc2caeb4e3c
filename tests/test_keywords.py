from pathlib import Path

import pytest

from hiqa.errors import HiqaError
from hiqa.keywords.rules import (
    MAX_KEYWORDS,
    Identities,
    _is_part_number,
    count_matches,
    distinctive_keywords,
    document_candidates,
    extract_keywords,
    identity_candidates,
    load_lexicon,
    normalize_keyword,
    query_phrases,
    without_phrases,
)


def test_normalize_keyword_ignores_case_space_and_punctuation() -> None:
    forms = ["CA-IS3722HS", "ca is3722hs", "CAIS3722HS", " ca_is3722hs ", "ＣＡ－ＩＳ３７２２ＨＳ"]
    assert {normalize_keyword(f) for f in forms} == {"cais3722hs"}
    assert normalize_keyword("open(2)") == "open2"
    assert normalize_keyword("上海川土微电子有限公司") == "上海川土微电子有限公司"


@pytest.mark.parametrize(
    ("query", "keywords", "expected"),
    [
        ("What is the supply range of the ca is3722hs?", ["CA-IS3722HS"], 1),
        ("CAIS3722HS supply", ["CA-IS3722HS"], 1),
        ("CA-IS3722HS-Q1 supply", ["CA-IS3722HS"], 1),
        ("or else what", ["ls"], 0),
        ("what does ls -la print", ["ls", "ls(1)"], 1),
        ("what does wc(1) count", ["wc(1)", "wc"], 2),
        ("型号CA-IS3722HS的供电电压", ["CA-IS3722HS"], 1),
        ("上海川土微电子有限公司的地址", ["上海川土微电子有限公司"], 1),
        ("revenue of Acme in the Annual Report 2023", ["Acme", "Annual Report 2023", "2023"], 3),
        ("revenue in 20235", ["2023"], 0),
        ("anything", [], 0),
        ("same keyword twice", ["twice", "TWICE"], 1),
    ],
)
def test_count_matches(query: str, keywords: list[str], expected: int) -> None:
    assert count_matches(query, keywords) == expected


def test_man_page_keywords() -> None:
    assert extract_keywords(
        "wc(1)", "wc.1.md", "NAME\nwc - print newline, word, and byte counts"
    ) == (
        "wc(1)",
        "wc",
    )
    keywords = extract_keywords(
        "OPEN",
        "open.2.md",
        "OPEN(2) Linux Programmer's Manual OPEN(2)\nopen, openat - open a file. "
        "See also chmod(2), fcntl(2).",
    )
    assert keywords == ("open(2)", "open")


def test_datasheet_keywords() -> None:
    keywords = extract_keywords(
        "ADC12QJ1600-SP Quad-Channel, 12-bit, 1.6-GSPS ADC Datasheet",
        "ADC12QJ1600-SP_datasheet.pdf",
        "ADC12QJ1600-SP Quad-Channel 12-bit 1.6-GSPS ADC. The ADC12QJ1600-SP is a quad-channel "
        "ADC; the ADC12QJ1600-SEP is its sibling. Supply 1.9-V, isolation 5kV, 150Mbps at 25°C. "
        "Clocked by the LMK04828 over JESD204C. Texas Instruments Incorporated.",
    )
    assert keywords == ("ADC12QJ1600-SP", "Texas Instruments Incorporated", "Texas Instruments")


def test_repeated_first_page_part_numbers_are_kept() -> None:
    keywords = extract_keywords("Digital Isolator", "isolator.pdf", "TPS7A47 ... TPS7A47 ... 2.5V")
    assert keywords == ("isolator", "TPS7A47")


def test_chinese_datasheet_keywords() -> None:
    keywords = extract_keywords(
        "CA-IS3722HS 数据手册",
        "CA-IS3722HS.pdf",
        "CA-IS3722HS是一款双通道数字隔离器，工作电压2.5V至5.5V。上海川土微电子有限公司",
    )
    assert keywords == ("CA-IS3722HS", "上海川土微电子有限公司")


def test_report_keywords() -> None:
    assert extract_keywords("Acme Corp Annual Report 2023", "acme_annual_report_2023.pdf", "") == (
        "Acme Corp",
        "Acme",
        "Annual Report 2023",
        "2023",
    )
    assert extract_keywords("2022 Annual Report", "report.pdf", "Siemens AG") == (
        "Annual Report 2022",
        "2022",
        "Siemens AG",
        "Siemens",
    )
    assert extract_keywords("某某科技股份有限公司2023年年度报告", "600000_2023.pdf", "") == (
        "某某科技股份有限公司",
        "2023年",
        "2023",
    )


def test_generic_words_never_become_keywords() -> None:
    assert extract_keywords("User Manual", "manual.pdf", "The manual describes the device.") == ()
    assert extract_keywords("Introduction", "Introduction.md", "") == ()
    assert extract_keywords("Datasheet", "the.pdf", "") == ()


def test_keywords_are_deduplicated_and_capped() -> None:
    first_page = " ".join(f"PN{i:03d}X PN{i:03d}X" for i in range(40))
    keywords = extract_keywords("CA-IS3722HS / CAIS3722HS", "ca_is3722hs.pdf", first_page)
    assert len(keywords) == MAX_KEYWORDS
    assert len({normalize_keyword(k) for k in keywords}) == MAX_KEYWORDS
    assert keywords[0] == "CA-IS3722HS"
    assert sum(normalize_keyword(k) == "cais3722hs" for k in keywords) == 1


def write(tmp_path: Path, content: bytes) -> Path:
    path = tmp_path / "lexicon.csv"
    path.write_bytes(content)
    return path


def test_load_lexicon_with_bom_and_header(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "\ufeffdoc,keyword\nwc.1.md,wc\nwc.1.md,word count\nwc.1.md,Word-Count\n"
        "ls.1.md,ls\n".encode(),
    )
    lexicon, warnings = load_lexicon(path)
    assert lexicon == {"wc.1.md": ("wc", "word count"), "ls.1.md": ("ls",)}
    assert warnings == []


def test_load_lexicon_without_header_skips_bad_rows(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        b'a.pdf,CA-IS3722HS\n\nb.pdf\nb.pdf,x,y\n,orphan\nb.pdf, \nb.pdf,"ADC, rev B"\n',
    )
    lexicon, warnings = load_lexicon(path)
    assert lexicon == {"a.pdf": ("CA-IS3722HS",), "b.pdf": ("ADC, rev B",)}
    assert warnings == [
        "lexicon.csv line 3: expected 2 columns (doc,keyword), got 1; row skipped",
        "lexicon.csv line 4: expected 2 columns (doc,keyword), got 3; row skipped",
        "lexicon.csv line 5: empty doc; row skipped",
        "lexicon.csv line 6: empty keyword; row skipped",
    ]


def test_empty_lexicon(tmp_path: Path) -> None:
    assert load_lexicon(write(tmp_path, b"")) == ({}, [])
    assert load_lexicon(write(tmp_path, b"doc,keyword\n")) == ({}, [])


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"%PDF-1.7\n\x00\x01\x02binary", "not a CSV text file"),
        (b"\xff\xfe\xfa latin garbage \xe9", "not UTF-8"),
        (b'{\n  "docs": [1]\n}\n', "no row of the form doc,keyword"),
    ],
)
def test_load_lexicon_rejects_non_csv(tmp_path: Path, content: bytes, message: str) -> None:
    with pytest.raises(HiqaError, match=message):
        load_lexicon(write(tmp_path, content))


def test_load_lexicon_missing_file(tmp_path: Path) -> None:
    with pytest.raises(HiqaError, match="cannot read expert lexicon"):
        load_lexicon(tmp_path / "missing.csv")


def test_clean_keyword_keeps_paired_brackets_and_strips_enclosing_ones():
    from hiqa.keywords.rules import clean_keyword

    assert clean_keyword("open(2)") == "open(2)"
    assert clean_keyword('"(CA-IS3722HS)",') == "CA-IS3722HS"
    assert clean_keyword("(foo") == "foo"
    assert clean_keyword("(a) or (b)") == "(a) or (b)"
    assert clean_keyword("  v2.1. ") == "v2.1"


def test_part_numbers_plain_words_numbers_and_full_width_forms() -> None:
    """Plain ASCII words and numbers are never part numbers (they skip normalising); full-width
    and mixed forms still go through it."""
    for token in ("ABCD", "datasheet", "1234", "2.5V", "ＡＢＣＤ", "１２３４", "AB1"):
        assert not _is_part_number(token, uppercase_only=False), token
    for token in ("XC7000", "CA-IS3722HS", "ＸＣ７０００", "tmp117"):
        assert _is_part_number(token, uppercase_only=False), token
    assert _is_part_number("ＸＣ７０００", uppercase_only=True)
    assert not _is_part_number("tmp117", uppercase_only=True)


@pytest.mark.parametrize(
    ("query", "keywords", "rest"),
    [
        ("xxd: Display help", ["xxd"], "Display help"),
        # a name that ends the clause takes the words leading up to it, a possessive its "'s"
        ("What is the supply range of the CA-IS3722HS?", ["CA-IS3722HS"],
         "What is the supply range?"),
        ("What was Boeing's revenue by business segment in FY2018?", ["Boeing", "FY2018"],
         "What was revenue by business segment?"),
        ("How did Acme’s margin move in FY2022 and FY2023?", ["Acme", "FY2022", "FY2023"],
         "How did margin move?"),
        ("Can DROP DATABASE run in a transaction block?", ["DROP DATABASE"],
         "Can run in a transaction block?"),
        ("DROP INDEX CONCURRENTLY", ["DROP", "DROP INDEX"], "CONCURRENTLY"),  # longest first
        ("型号CA-IS3722HS的供电电压", ["CA-IS3722HS"], "型号的供电电压"),
        ("xxd", ["xxd"], ""),  # nothing asked besides the name
        ("xxd: ", ["xxd"], ""),
        ("what does ls -la print", ["ls"], "what does -la print"),
        ("or else what", ["ls"], "or else what"),  # a keyword inside a word is no name
        ("revenue of Acme in 2023", [], "revenue of Acme in 2023"),
    ],
)
def test_without_phrases_cuts_the_names_and_keeps_the_wording(query: str, keywords: list[str],
                                                               rest: str) -> None:
    names = {normalize_keyword(k) for k in keywords} & query_phrases(query)
    assert without_phrases(query, names) == rest


# --- collection-relative identity (issue #29) ----------------------------------------------


def _distinct(titles: dict[str, str]) -> dict[str, list[str]]:
    pool = {doc: document_candidates(title, doc, "") for doc, title in titles.items()}
    return {doc: [k.text for k in ks] for doc, ks in distinctive_keywords(pool).items()}


def test_versions_in_template_titles_tell_the_releases_apart() -> None:
    found = _distinct({f"{v}.html": f"What’s New In Python {v}" for v in ("3.3", "3.4", "3.10")})
    assert found["3.3.html"] == ["Python 3.3", "3.3"]
    assert found["3.10.html"] == ["Python 3.10", "3.10"]
    # "Python", "New" and "What's" name the collection, never one document
    assert not any("python" == normalize_keyword(k) for ks in found.values() for k in ks)


def test_a_version_written_with_v_and_trailing_zero_is_named_by_the_short_form() -> None:
    found = _distinct({f"perl5{m}0delta.html": f"perl5{m}0delta - what is new for perl v5.{m}.0"
                       for m in ("28", "30", "32")})
    assert "v5.30.0" in found["perl5300delta.html"]
    assert count_matches("What changed in perl 5.30?", found["perl5300delta.html"]) == 2
    assert count_matches("What changed in perl 5.30?", found["perl5280delta.html"]) == 0
    assert count_matches("in v5.30", found["perl5300delta.html"]) == 1


@pytest.mark.parametrize(("titles", "doc", "expected"), [
    ({"a": "Acme Corp Annual Report 2022", "b": "Acme Corp Annual Report 2023",
      "c": "Acme Corp Annual Report 2024"}, "b", {"2023", "Report 2023"}),
    ({"a": "Results Q1 2024", "b": "Results Q2 2024", "c": "Results Q3 2024",
      "d": "Results Q3 2023"}, "c", {"Q3", "Results Q3", "Q3 2024"}),
    ({"a": "FY2022 results", "b": "FY2023 results"}, "b", {"FY2023"}),
    ({"a": "TPS7A47 Datasheet Rev. B", "b": "TPS7A47 Datasheet Rev. C",
      "c": "TPS7A47 Datasheet Rev. D"}, "b", {"Rev. C"}),
    ({"a": "Globex Sustainability Report 2023", "b": "Initech Sustainability Report 2023",
      "c": "Umbrella Sustainability Report 2023"}, "b", {"Initech"}),
])
def test_identity_from_versions_years_quarters_revisions_and_names(titles, doc, expected):
    found = _distinct(titles)
    assert expected <= set(found[doc]), found[doc]
    shared = set.intersection(*(set(map(normalize_keyword, ks)) for ks in found.values()))
    assert not shared, shared  # nothing every document has


def test_a_term_most_documents_share_is_no_keyword_and_a_collection_of_one_has_none() -> None:
    titles = {"a": "Acme Corp results 2023", "b": "Acme Corp results 2024",
              "c": "Acme Corp results 2025", "d": "Globex Corp results 2025"}
    found = _distinct(titles)
    assert "Acme" not in found["a"] and found["d"][:2] == ["Globex Corp", "Globex"]
    assert "2025" in found["c"] and "2025" in found["d"]  # half of the collection: kept
    # several terms in one question pick out the one document that has them all
    assert count_matches("Globex 2025", found["d"]) > count_matches("Globex 2025", found["c"])
    assert _distinct({"only.pdf": "What’s New In Python 3.3"}) == {"only.pdf": []}


def test_identity_candidates_are_numbers_and_lettered_revisions() -> None:
    assert identity_candidates("Django 3.0 release notes") == ["Django 3.0", "3.0"]
    assert identity_candidates("Evil Login here manual") == []  # capitals alone name nothing
    assert identity_candidates("User Guide") == []
    assert identity_candidates("free 12") == ["free 12"]  # "12" alone names nothing


@pytest.mark.parametrize(("query", "keyword", "expected"), [
    ("What changed in 3.3?", "3.3", 1),
    ("What changed in 13.3?", "3.3", 0),
    ("What changed in 3.30?", "3.3", 0),
    ("What changed in 3.3.1?", "3.3", 0),
    ("What changed in 33 modules?", "3.3", 0),
    ("the 3 3 rule", "3.3", 0),
    ("What changed in v3.3?", "3.3", 1),
    ("What changed in 3.3.0?", "3.3", 1),
    ("release 5.30 notes", "v5.30.0", 1),
    ("release 5.3 notes", "v5.30.0", 0),
    ("Python 3.3", "Python 3.3", 1),
    ("Python 3.30", "Python 3.3", 0),
    ("Results for Q3 2024", "Q3 2024", 1),
    ("Results for Q3 2023", "Q3 2024", 0),
])
def test_numbers_match_as_whole_tokens(query: str, keyword: str, expected: int) -> None:
    assert count_matches(query, [keyword]) == expected


def test_identities_counted_as_documents_come_equal_the_whole_collections() -> None:
    titles = {f"{v}.md": f"Acme {v} release notes" for v in ("1.0", "1.1", "2.0", "2.0.0")}
    pool = {doc: document_candidates(title, doc, "") for doc, title in titles.items()}
    counted = Identities()
    for doc, words in pool.items():
        counted.put(doc, words)
    assert {d: counted.distinct(d) for d in pool} == distinctive_keywords(pool)
    # "2.0" and "2.0.0" are one version: two of four documents have it, so it still counts
    assert [k.documents for k in counted.distinct("2.0.md")] == [2, 2]
    counted.put("2.0.0.md", document_candidates("Acme 3.0 release notes", "3.0.md", ""))
    assert [k.documents for k in counted.distinct("2.0.md")] == [1, 1]  # replaced, not added
