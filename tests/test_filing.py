"""Filings (issue #46): identity from the cover page, page gold, deterministic rankings, on
small filings the tests generate (never the benchmark's)."""
from __future__ import annotations

from datetime import date

import pytest
from pdf_fixtures import (
    contents_filing_pdf,
    exhibit_numbers_pdf,
    filing_pdf,
    form_filing_pdf,
    printed_toc_pdf,
    ruled_statement_pdf,
    statements_after_items_pdf,
    statements_filing_pdf,
)

from hiqa.answer.cited import answer
from hiqa.augment import segment_document
from hiqa.collection import Collection
from hiqa.eval.runner import Gold, GoldJudge, Question
from hiqa.formats import statements
from hiqa.formats.form import form_structure, label, note_headings
from hiqa.formats.pdf.reader import parse_pdf
from hiqa.keywords.filing import company_names, read_filing
from hiqa.model import Block, Heading

COVER = """UNITED STATES
SECURITIES AND EXCHANGE COMMISSION
FORM {form}
{period}
Commission file number 1-442 {company}
(Exact name of registrant as specified in its charter)
Common Stock, $5 par value BA New York Stock Exchange
"""


@pytest.mark.parametrize(("form", "period", "company", "title", "named", "not_named"), [
    ("10-K", "For the fiscal year ended December 31, 2022", "THE BOEING COMPANY",
     "Boeing — Form 10-K, fiscal year 2022", {"FY2022", "fiscal 2022", "2022 10-K", "FY22"},
     {"2023", "New York Stock Exchange"}),
    ("10-K", "FOR THE FISCAL YEAR ENDED MAY 31, 2023", "NIKE, Inc .",
     "Nike — Form 10-K, fiscal year 2023", {"FY2023", "Nike"}, {"FY2022", "May"}),
    ("10-Q", "For the quarterly period ended July 2, 2023", "PFIZER INC.",
     "Pfizer — Form 10-Q, Q2 fiscal 2023 (quarter ended July 2, 2023)",
     {"Q2 2023", "second quarter of 2023"}, {"FY2023", "Q3 2023"}),
    ("8-K", "Date of Report (Date of earliest event reported): February 1, 2023",
     "Verizon Communications Inc.", "Verizon Communications — Form 8-K, February 1, 2023",
     {"8-K", "Verizon"}, {"FY2023"}),
])
def test_a_cover_page_names_company_form_and_period(form, period, company, title, named,
                                                    not_named):
    filing = read_filing(COVER.format(form=form, period=period, company=company))
    assert filing is not None and filing.title() == title
    assert named <= set(filing.keywords())
    assert not not_named & set(filing.keywords())


def test_a_year_ended_in_january_is_named_as_the_filing_names_it():
    text = COVER.format(form="10-K", company="BEST WIDGETS INC.",
                        period="For the fiscal year ended January 28, 2023")
    assert read_filing(text).period.year == 2023  # nothing says otherwise: the year it ends in
    said = text + "\nIn fiscal 2022 we opened stores. Fiscal 2022 comparable sales rose.\n"
    filing = read_filing(said)
    assert filing.period.year == 2022 and filing.period.ended == date(2023, 1, 28)
    assert "FY2022" in filing.keywords()


def test_not_a_filing():
    assert read_filing("# Annual report 2019\n\nForm 10-K is mentioned in passing.") is None


def test_company_names():
    assert company_names("The Boeing Company") == ("Boeing",)
    assert company_names("Amazon.com, Inc.") == ("Amazon",)
    assert company_names("Verizon Communications Inc.") == ("Verizon Communications", "Verizon")
    assert company_names("American Water Works Company, Inc.") == ("American Water Works",
                                                                   "American")


UNLABELLED = """UNITED STATES
SECURITIES AND EXCHANGE COMMISSION
FORM 10-K
For the Fiscal Year Ended June 30, 2016
Commission File Number 001-37845

{name}

WASHINGTON
(STATE OF INCORPORATION)
ONE EXAMPLE WAY, REDMOND, WASHINGTON 98052
"""


@pytest.mark.parametrize(("name", "company"), [
    ("MICROSOFT CORPORATION", "Microsoft Corporation"),  # the form's place, a legal form
    ("WASHINGTON", ""),  # no legal form: a state or an address is never taken for a name
])
def test_a_cover_without_the_registrant_label_names_the_company_after_its_file_number(
        name, company):
    filing = read_filing(UNLABELLED.format(name=name))
    assert filing is not None and filing.company == company
    assert filing.title() == (f"{company_names(company)[0]} — " if company else "") + \
        "Form 10-K, fiscal year 2016"


@pytest.fixture
def filings(settings, tmp_path):
    folder = tmp_path / "filings"
    folder.mkdir()
    for year in (2018, 2019, 2020):
        filing_pdf(folder, "Acme Widgets, Inc.", "10-K",
                   f"For the fiscal year ended May 31, {year}", f"July 24, {year + 1}", year)
    return folder


def test_filings_are_titled_and_named_by_their_cover(settings, filings):
    col = Collection("filings", settings, create=True)
    col.ingest([filings])
    titles = {d: r["title"] for d, r in col.documents.items()}
    assert titles == {f"filing-{y}-10-K.pdf": f"Acme Widgets — Form 10-K, fiscal year {y}"
                      for y in (2018, 2019, 2020)}
    for asked in ("FY2019", "fiscal 2019", "the 2019 10-K"):
        result, hits = col.search_result(f"What were total current assets in {asked}?", k=3)
        assert result.named_document == "filing-2019-10-K.pdf", asked
        assert hits[0].segment.doc_id == "filing-2019-10-K.pdf", asked
        assert 3 in hits[0].segment.pages, asked
    # the filing date (July 24, 2020 for fiscal 2019) never names a filing
    result, _ = col.search_result("What was filed on July 24?", k=3)
    assert result.named == {}
    keywords = {k for d in col.documents for k in col.keywords(d).texts()}
    assert not {"New York Stock Exchange", "July 24", "Filed July"} & keywords


def test_two_fresh_ingests_rank_alike(settings, filings, tmp_path):
    """Identical text on different pages (the forward-looking boilerplate) ties; the
    rankings of two fresh ingests must still be identical."""
    rankings = []
    for name in ("one", "two"):
        col = Collection(name, settings, create=True)
        col.ingest([filings])
        _, hits = col.search_result("forward-looking statements risks uncertainties", k=10)
        rankings.append([(h.segment.doc_id, h.segment.pages, h.segment.path) for h in hits])
    assert len(rankings[0]) >= 6  # the boilerplate stands twice in each of three filings
    assert rankings[0] == rankings[1]


def test_page_gold_rule(settings, filings):
    col = Collection("pages", settings, create=True)
    col.ingest([filings])
    judge = GoldJudge({})
    q = Question("q", "?", (Gold("filing-2019-10-K.pdf", (), page=3),))
    segs = col.segments("filing-2019-10-K.pdf")
    relevant = [s for s in segs if judge.relevant(s, q)]
    assert relevant and all(3 in s.pages for s in relevant)
    assert not [s for s in col.segments("filing-2018-10-K.pdf") if judge.relevant(s, q)]


def test_a_footer_that_flows_with_the_text_is_not_text(tmp_path):
    from pdf_fixtures import flowing_footer_pdf

    from hiqa.formats import load_document

    doc = load_document(flowing_footer_pdf(tmp_path))
    assert "FORM 10-K" not in doc.markdown and "ACME, INC." not in doc.markdown
    assert "see page 4." in doc.markdown  # a sentence ending one page stays
    assert [h.title for h in doc.headings] == [f"Topic {n}" for n in range(1, 7)]


@pytest.mark.parametrize(("text", "expected"), [
    ("Consolidated Balance Sheets", "balance sheet"),
    ("The Boeing Company and Subsidiaries Consolidated Statements of Operations", "income"),
    ("CONDENSED CONSOLIDATED STATEMENTS OF INCOME (UNAUDITED)", "income"),
    ("Consolidated Statements of Operations and Comprehensive Income (Loss)", "income"),
    ("Consolidated Statements of Comprehensive Income (Loss) (continued)", "comprehensive income"),
    ("PFIZER INC. AND SUBSIDIARY COMPANIES CONDENSED CONSOLIDATED BALANCE SHEETS",
     "balance sheet"),
    ("Consolidated Statements of Financial Position", "balance sheet"),
    ("Consolidated Statements of Changes in Equity", "equity"),
    ("NOTES TO CONSOLIDATED FINANCIAL STATEMENTS (continued)", "notes"),
    # a statement's name with "statements" after it, as Microsoft titles them, or alone
    ("INCOME STATEMENTS", "income"),
    ("COMPREHENSIVE INCOME STATEMENTS", "comprehensive income"),
    ("CASH FLOWS STATEMENTS", "cash flows"),
    ("STOCKHOLDERS’ EQUITY STATEMENTS", "equity"),
    ("BALANCE SHEETS", "balance sheet"),
    # the unit after the name, however the filer words it
    ("CONSOLIDATED STATEMENTS OF OPERATIONS (Amounts in millions, except per share data)",
     "income"),
    ("Consolidated Statements of Cash Flows (Dollars in thousands)", "cash flows"),
    ("Income statements of the segments", None),
    ("Analysis of the income statements", None),
    # an index line, a sentence, a discussion of a statement, a note's heading, a bullet
    ("Consolidated Statements of Operations 53", None),
    ("See Notes to the Consolidated Financial Statements on pages 59 - 114.", None),
    ("ANALYSIS OF THE CONSOLIDATED STATEMENTS OF INCOME", None),
    ("O. Cash Equivalents and Statement of Cash Flows", None),
    ("• Cash and cash equivalents Consolidated Balance Sheets", None),
    ("Amounts recognized in the balance sheets", None),
    ("Off-Balance Sheet Arrangements", None),
    # the owner printed after the caption on its line, as Corning sets it
    ("Consolidated Balance Sheets Corning Incorporated and Subsidiary Companies", "balance sheet"),
    ("Consolidated Statements of Cash Flows (continued) Acme Inc. and Subsidiaries", "cash flows"),
    ("Corning Incorporated and Subsidiary Companies", None),
    ("Investments in subsidiaries and affiliates", None),
])
def test_statement_captions_by_their_grammar(text, expected):
    assert statements.family(text) == expected


def test_a_statement_is_known_by_the_names_it_does_not_print():
    assert statements.aliases("Consolidated Statements of Operations") == (
        "income statement", "statement of income", "profit and loss")
    assert statements.aliases("Consolidated Statements of Financial Position") == ("balance sheet",)
    assert statements.aliases("Notes to Consolidated Financial Statements") == ()
    assert statements.aliases("Item 8. Financial Statements") == ()


def test_captions_in_body_type_head_their_statements(tmp_path):
    doc = parse_pdf(statements_filing_pdf(tmp_path), "acme")
    heads = [(s.level, s.title, s.pages) for s in doc.sections if s.level]
    assert heads == [
        (1, "Item 7. Management's Discussion and Analysis", (2,)),
        (2, "Analysis of the Consolidated Statements of Income", (2,)),
        (1, "Item 8. Financial Statements and Supplementary Data", (3,)),
        # the index's lines (page 3) and the "(continued)" page (7) head nothing
        (2, "Acme Widgets, Inc. Consolidated Statements of Income", (4,)),
        (2, "Consolidated Balance Sheets", (5,)),
        (2, "Consolidated Statements of Cash Flows", (6, 7)),
        (2, "Notes to Consolidated Financial Statements", (8,)),
        # the notes' caption at the head of page 9 does not cut the note in two
        (2, "Note 1. Inventories", (8, 9)),
    ]


def test_a_question_naming_a_statement_finds_it(settings, tmp_path):
    statements_filing_pdf(tmp_path)
    col = Collection("statements", settings, create=True)
    col.ingest([tmp_path])
    (income,) = [s for s in col.segments("acme-2019-10-K.pdf") if 4 in s.pages and s.is_table]
    assert "income statement" in income.augmented_text.splitlines()[0]
    assert "income statement" not in " ".join(income.path).casefold()  # the path is as printed
    for asked, page in (("What was net income according to the income statement?", 4),
                        ("Total current assets in the statement of financial position", 5),
                        ("Purchases of property, plant and equipment, cash flow statement",
                         7)):
        result, hits = col.search_result(asked, k=3)
        assert page in hits[0].segment.pages, (asked, [h.segment.pages for h in hits])
        assert len(result.asked_statements) == 1
    assert "asks for the income statement" in col.search_result(
        "Net income in the P&L?", k=3)[0].statements_note()
    result, _ = col.search_result("Off-balance sheet arrangements", k=3)
    assert result.asked_statements == () and result.candidates.asked is None


@pytest.mark.parametrize(("text", "keys"), [
    ("Item 1A. Risk Factors", ((0, 1, 0, 1),)),
    ("ITEM 7. MANAGEMENT’S DISCUSSION AND ANALYSIS", ((0, 7, 0, 0),)),
    ("Item 8", ((0, 8, 0, 0),)),
    ("Item 2.02 Results of Operations and Financial Condition", ((0, 2, 2, 0),)),
    ("PART II. OTHER INFORMATION", ((2, -1, 0, 0),)),
    ("PART II Item 5. Market for Registrant's Common Equity", ((2, -1, 0, 0), (0, 5, 0, 0))),
    # a reference, an entry of the printed contents, its column head, prose
    ("Item 7 of this report discusses our results", ()),
    ("Item 1. Business 3", ()),
    ("PART I Page", ()),
    ("Items are shipped in two days", ()),
])
def test_part_and_item_lines(text, keys):
    assert label(text) == keys


def test_parts_and_items_head_a_filing_whatever_its_producer_made_of_them(tmp_path):
    doc = parse_pdf(form_filing_pdf(tmp_path), "acme")
    heads = [(s.level, s.title) for s in doc.sections if s.level]
    assert heads == [
        (1, "Table of Contents"),  # the cover's bold lines are its text, not headings
        (1, "PART I"),
        (2, "Item 1. Business"),
        (3, "Our Widgets"),
        (2, "Item 1A. Risk Factors"),  # a line in body type
        (2, "Item 2. Properties"),  # set larger than Item 1
        (2, "Item 3. Legal Proceedings"),
        (1, "PART II"),
        (2, "Item 7. Management's Discussion and Analysis"),
        (3, "Results of Operations"),  # set as large as its Item
        (2, "Item 8. Financial Statements and Supplementary Data"),
        (3, "Report of Independent Registered Public Accounting Firm"),
        (3, "Consolidated Balance Sheets"),  # the Item's statement, not the report's
    ]
    assert "SECURITIES AND EXCHANGE COMMISSION" in doc.markdown  # kept, as text


def test_statements_printed_after_part_iv_are_item_8s(tmp_path):
    """A 10-K may answer Item 8 with a reference and print its statements after Part IV: they
    go under Item 8 again (its Part and title repeated where their pages open), not under Item
    16 or the signatures, and each caption names its statement though its owner follows it."""
    doc = parse_pdf(statements_after_items_pdf(tmp_path), "acme")
    heads = [(s.level, s.title, s.pages) for s in doc.sections if s.level]
    assert heads[10:] == [
        (2, "Item 16. Form 10-K Summary", (2,)),
        (3, "Signatures", (2,)),
        (1, "PART II", (3,)),
        (2, "Item 8. Financial Statements and Supplementary Data", (3,)),
        (3, "Index to Financial Statements", (3,)),
        (3, "Report of Independent Registered Public Accounting Firm", (3,)),
        (3, "Consolidated Statements of Income Acme Widgets, Inc. and Subsidiary Companies", (4,)),
        (3, "Consolidated Balance Sheets Acme Widgets, Inc. and Subsidiary Companies", (5,)),
        (3, "Notes to Consolidated Financial Statements", (6,)),
    ]
    balance = next(s for s in doc.sections if s.title.startswith("Consolidated Balance"))
    assert statements.innermost(doc.path_of(balance)) == "balance sheet"


def test_a_filings_contents_lists_its_items_and_its_type_sets_what_is_inside_them(tmp_path):
    """A printed contents of Parts and Items says nothing of the sub-headings inside the Items
    (MD&A's "Results of Operations"), which the filing sets apart only in bold: they head
    their parts one level below their Item.  A document with a printed contents that is not a
    filing keeps the rule of every other such document (the contents' entries only)."""
    doc = parse_pdf(contents_filing_pdf(tmp_path), "globex")
    assert doc.metadata["headings_from"] == "toc"
    heads = [(s.level, s.title) for s in doc.sections if s.level]
    assert heads == [
        (1, "PART I"),
        (2, "Item 1. Business"),
        (3, "Our Products"),
        (2, "Item 1A. Risk Factors"),
        (2, "Item 2. Properties"),
        (1, "PART II"),
        (2, "Item 7. Management's Discussion and Analysis"),
        (3, "Results of Operations"),
        (3, "Liquidity and Capital Resources"),
        (2, "Item 7A. Market Risk"),
        (2, "Item 8. Financial Statements"),
    ]
    report = parse_pdf(printed_toc_pdf(tmp_path), "review")
    assert report.metadata["headings_from"] == "toc"
    assert {s.title for s in report.sections if s.level} == {
        "Overview", "Scope of the review", "Sites visited", "Maintenance", "Valve replacements",
        "Sensor calibration", "Outlook", "Budget for next year"}


def test_a_document_with_a_few_numbered_items_is_not_a_filing():
    events = [Heading(1, "Checklist", 1), Heading(2, "Item 1. Apples", 1),
              Block("text", "Red ones.", 1), Heading(2, "Item 2. Pears", 1),
              Heading(3, "Item 3. Plums", 2)]
    assert form_structure(events) == (events, {})


def test_a_company_and_a_period_name_one_filing_and_a_company_alone_its_latest(settings,
                                                                              filings):
    filing_pdf(filings, "Globex Corporation", "10-K", "For the fiscal year ended May 31, 2019",
               "July 20, 2019", 2019, name="globex-2019-10-K.pdf")
    col = Collection("conjunction", settings, create=True)
    col.ingest([filings])
    assert col.documents["filing-2020-10-K.pdf"]["filing"] == {
        "company": ["Acme Widgets", "Acme"], "form": "10-K", "period_end": "2020-05-31"}
    # "2019" also names Globex's fiscal-2019 10-K; "Acme" says whose
    result, hits = col.search_result("What were Acme's total current assets in 2019?", k=3)
    assert result.named_document == "filing-2019-10-K.pdf" and result.latest is None
    assert hits[0].segment.doc_id == "filing-2019-10-K.pdf"
    result, _ = col.search_result("What were total current assets in fiscal 2019?", k=3)
    assert set(result.named) == {"filing-2019-10-K.pdf", "globex-2019-10-K.pdf"}
    # the company alone: its latest filing first, and the note says so
    result, hits = col.search_result("Is the business of Acme Widgets seasonal?", k=20)
    assert result.latest == "filing-2020-10-K.pdf"
    assert hits[0].segment.doc_id == "filing-2020-10-K.pdf"
    assert "Acme Widgets — Form 10-K, fiscal year 2020" in result.latest_note()
    docs = [h.segment.doc_id for h in hits]
    latest_last = max(i for i, d in enumerate(docs) if d == "filing-2020-10-K.pdf")
    assert "filing-2019-10-K.pdf" in docs[latest_last:]  # the others follow


def test_a_name_inside_a_longer_name_is_not_a_name_of_its_own(settings, tmp_path):
    """"American" is the short name of American Express and of American Water Works; a
    question that writes "American Water Works" names the one and gives the other nothing."""
    folder = tmp_path / "american"
    folder.mkdir()
    filing_pdf(folder, "American Express Company", "10-K",
               "For the fiscal year ended December 31, 2022", "February 10, 2023", 2022,
               name="amex-2022.pdf")
    for year in (2021, 2022):
        filing_pdf(folder, "American Water Works Company, Inc.", "10-K",
                   f"For the fiscal year ended December 31, {year}", f"February 15, {year + 1}",
                   year, name=f"awk-{year}.pdf")
    col = Collection("american", settings, create=True)
    col.ingest([folder])
    result, hits = col.search_result(
        "Does American Water Works have positive working capital based on FY2022 data?", k=20)
    assert set(result.named) == {"awk-2022.pdf"}
    assert hits[0].segment.doc_id == "awk-2022.pdf"
    cands = result.candidates
    result.segments.prefetch(list(cands.ids))
    docs = [result.segments[i].doc_id for i in cands.ids]
    amex = [n for n, doc in enumerate(docs) if doc == "amex-2022.pdf"]
    assert amex and not cands.matches[amex].any() and not cands.names[amex].any()
    result, _ = col.search_result("What were American Express's total current assets?", k=5)
    assert set(result.named) == {"amex-2022.pdf"}


@pytest.mark.parametrize(("question", "families"), [
    ("Use the balance sheet and the P&L statement.", {"balance sheet", "income"}),
    ("What does the statement of financial position show?", {"balance sheet"}),
    ("Which cash flow statement line grew most?", {"cash flows"}),
    # a measure read off one statement asks for it
    ("Did Pfizer grow its PPNE between FY20 and FY21?", {"balance sheet"}),
    ("What is the quick ratio?", {"balance sheet"}),
    ("Does Boeing have an improving gross margin profile?", {"income"}),
    ("How much was capex in 2022?", {"cash flows"}),
    ("Purchases of property, plant and equipment in 2019?", set()),
    # none: an off-balance sheet arrangement, a measure with many homes
    ("Any off-balance sheet arrangements?", set()),
    ("Which region had the biggest drop in revenue?", set()),
])
def test_the_statements_a_question_asks_for(question, families):
    assert statements.asked(question) == families


def test_numbers_ending_pages_in_step_with_them_are_page_numbers(tmp_path):
    doc = parse_pdf(exhibit_numbers_pdf(tmp_path), "exhibit")
    lines = [ln.strip() for ln in doc.markdown.splitlines() if ln.strip()]
    assert not {"1", "2", "3"} & set(lines)  # the exhibit's own page numbers
    assert "7" in lines  # a figure that ends a page, in step with no other
    assert "Clause 19 applies to every participant of the plan." in lines


def test_numbered_notes_in_body_type_head_their_notes():
    """As Pfizer sets them: the notes' lines in body type, so they ran on under the cash-flow
    statement's caption; a mention of a note in the text is not one."""
    events = [Heading(2, "Item 8. Financial Statements", 1),
              Heading(3, "Consolidated Statements of Cash Flows", 1),
              Block("text", "Cash paid for taxes 1,200", 1),
              Block("text", "Note 1. Basis of Presentation", 2), Block("text", "We report…", 2),
              Block("text", "Note 2. Inventories", 3), Block("text", "Note 1 describes it.", 3),
              Block("text", "Note 3 describes the debt below.", 3),
              Heading(3, "BALANCES WITHOUT", 3),  # a column head read as a heading
              Block("text", "Note 3. Debt", 4), Heading(2, "Item 9. Changes", 5)]
    items = {i: 2 for i in range(1, len(events) - 1)}
    out = note_headings(events, items)
    heads = [(e.level, e.title) for e in out if isinstance(e, Heading)]
    assert heads == [(2, "Item 8. Financial Statements"),
                     (3, "Consolidated Statements of Cash Flows"),
                     (3, "Note 1. Basis of Presentation"), (3, "Note 2. Inventories"),
                     (4, "BALANCES WITHOUT"), (3, "Note 3. Debt"), (2, "Item 9. Changes")]
    assert note_headings(events[:7], items) == events[:7]  # two notes are not yet a run


def test_the_statement_a_measure_asks_for_joins_the_candidates_from_the_leading_filings():
    """Among many segments the question's words never reach the statement's rows; the rows of
    the statements it asks for in the documents its best candidates come from join them."""
    from hiqa.index.lexical import LexicalIndex
    from hiqa.retrieve.routes import _statement_ids

    ids, docs, heads, bodies = [], [], [], []
    for doc in ("acme", "globex"):
        for n in range(30):
            ids.append(f"{doc}-{n}")
            docs.append(doc)
            heads.append(f"{doc} 10-K > Item 7 > Topic {n}")
            bodies.append(f"Discussion {n} of widget demand and pricing.")
        ids.append(f"{doc}-note")  # a note that says "balance sheet" in every line
        docs.append(doc)
        heads.append(f"{doc} 10-K > Item 8 > Note 9. Pensions")
        bodies.append("Amounts recognized in the balance sheets. Balance sheet classification "
                      "of the plans. The balance sheet dates.")
        ids.append(f"{doc}-bs")
        docs.append(doc)
        heads.append(f"{doc} 10-K > Item 8 > Consolidated Balance Sheets "
                     "(statement of financial position)")
        bodies.append("Property, plant and equipment, net 1,210 1,045")
    lexical = LexicalIndex.build(ids, bodies, docs, heads)
    found = _statement_ids(lexical, statements.asked("Did Acme grow its PPNE?"), ["acme-3"])
    assert found == ["acme-bs"]  # Acme's balance sheet, not its note, not Globex's
    assert _statement_ids(lexical, statements.asked("Did Acme grow its widget demand?"),
                          ["acme-3"]) == []


def test_a_measure_brings_its_statement_in_though_the_rows_share_no_word(settings, tmp_path):
    """"PPNE" is printed "Purchases of property, plant and equipment" nowhere and matches no
    row; the question asks for the balance sheet by it, and the balance sheet comes first."""
    statements_filing_pdf(tmp_path)
    col = Collection("measures", settings, create=True)
    col.ingest([tmp_path])
    result, hits = col.search_result("Did Acme grow its PPNE in 2019?", k=3)
    assert result.asked_statements == ("balance sheet",)
    assert 5 in hits[0].segment.pages  # the balance sheet's page


def test_a_statement_ruled_only_under_its_totals_keeps_a_row_per_printed_line(tmp_path):
    """Item 3: the ruled grid holds several printed rows per cell, the label cell one line
    longer than the figures beside it; read a printed line per row in the grid's columns,
    the wrapped label joined to its figures, no word lost."""
    doc = parse_pdf(ruled_statement_pdf(tmp_path), "sheet")
    [table] = [b for s in doc.sections for b in s.blocks if b.kind == "table"]
    assert [list(r) for r in table.rows] == [
        ["Current assets:", "", ""],
        ["Cash and equivalents", "9,889", "8,348"],
        ["Inventories", "6,854", "7,367"],
        ["Total current assets", "26,291", "20,556"],
        ["Property, plant and equipment, net", "4,904", "4,866"],
        ["TOTAL ASSETS", "37,740", "31,342"],
    ]


def test_a_statement_set_as_lines_keeps_a_line_per_row(tmp_path):
    """Item 3: rows printed as lines in one text block (a label and its figures each) stay a
    line each, not a paragraph of prose; prose lines around them are joined as before."""
    import pymupdf

    doc = pymupdf.open()
    page = doc.new_page()
    page.insert_text((72, 80), "CONSOLIDATED STATEMENTS OF INCOME", fontsize=11)
    lines = ["(In millions) 2021 2020 2019", "Revenues $ 44,538 $ 37,403 $ 39,117",
             "Cost of sales 24,576 21,162 21,643", "Gross profit 19,962 16,241 17,474",
             "Other (income) expense, net 14 139 (78)"]
    for k, text in enumerate(lines):
        page.insert_text((72, 110 + 13 * k), text, fontsize=10)
    for k, text in enumerate(["Revenue grew in every region as the stores reopened and the",
                              "digital business kept its growth of the year before."]):
        page.insert_text((72, 220 + 13 * k), text, fontsize=10)
    doc.save(tmp_path / "lines.pdf")
    md = parse_pdf(tmp_path / "lines.pdf", "lines").markdown
    assert "Revenues $ 44,538 $ 37,403 $ 39,117\nCost of sales 24,576 21,162 21,643\n" in md
    assert "reopened and the digital business" in md
    reply = answer("What was Nike's cost of sales in FY2020?",
                   [seg for seg in segment_document(parse_pdf(tmp_path / "lines.pdf", "lines"))],
                   llm=None)
    assert reply.text.startswith("Cost of sales, 2020: 21,162")


def test_a_footnote_mark_written_apart_goes_back_to_its_line(tmp_path):
    """A smaller "1" some producers write after the page's text (Pfizer's exhibits): read
    apart, each stood alone at the page's end as a bare number; it belongs to the line it
    touches, after "plan or policy." and before the footnote's first word."""
    import pymupdf

    doc = pymupdf.open()
    page = doc.new_page()
    end = "It applies to every plan or policy."
    page.insert_text((72, 100), "The policy covers every executive officer of the Company.",
                     fontsize=10)
    page.insert_text((72, 114), end, fontsize=10)
    page.insert_text((72, 300), "Exclusions apply for arrangements assumed in a transaction.",
                     fontsize=10)
    page.insert_text((72, 330), "Total current assets 19,815 19,378", fontsize=10)
    page.insert_text((72 + pymupdf.get_text_length(end, fontsize=10) + 0.5, 110), "1",
                     fontsize=6)
    page.insert_text((66, 300), "1", fontsize=7)
    width = pymupdf.get_text_length("Total current assets 19,815 19,378", fontsize=10)
    page.insert_text((72 + width + 0.5, 326), "2", fontsize=6)  # after a figure: dropped
    page.insert_text((72, 500), "3", fontsize=10)  # a number of body size stays text
    doc.save(tmp_path / "marks.pdf")
    md = parse_pdf(tmp_path / "marks.pdf", "marks").markdown
    assert "every plan or policy.1" in md
    assert "1 Exclusions apply for arrangements" in md
    assert "19,815 19,378" in md and "19,3782" not in md
    assert [ln for ln in md.splitlines() if ln.strip() in {"1", "2"}] == []
    assert md.rstrip().endswith("3")


def test_a_measure_finds_a_cell_far_from_the_retrieved_statement(settings, tmp_path):
    """Item 4: the balance sheet is retrieved, the revenue the ratio needs is in the income
    statement many sections away, under a header row the reader took for the rows' heading;
    the filing is searched for the missing line item by the words statements print for it."""
    import pymupdf

    from hiqa.answer.calc import compute

    doc = pymupdf.open()
    page = doc.new_page()
    y = 72

    def put(text: str, size: float = 10) -> None:
        nonlocal page, y
        if y > 720:
            page, y = doc.new_page(), 72
        page.insert_text((72, y), text, fontsize=size)
        y += size * 1.6

    put("Item 8. Financial Statements", 16)
    put("CONSOLIDATED STATEMENTS OF OPERATIONS (Amounts in millions)", 13)
    put("In millions 2019 2018", 12)
    for line in ("Total net revenues 6,489 7,500", "Cost of revenues 2,219 2,517",
                 "Operating income 1,607 1,988"):
        put(line)
    for n in range(16):  # notes in between: far more sections than the neighbours searched
        put(f"Note {n + 1}. Topic {n + 1}", 13)
        put(f"Revenue from topic {n + 1} grew in 2019 as widgets sold well in every region.")
    put("CONSOLIDATED BALANCE SHEETS", 13)
    put("At December 31, 2019 2018")
    for line in ("Total current assets 7,292 6,106", "Property and equipment, net 253 282",
                 "Total assets 19,845 17,890"):
        put(line)
    doc.save(tmp_path / "acme-2019.pdf")
    col = Collection("far", settings, create=True)
    col.ingest([tmp_path / "acme-2019.pdf"])
    question = ("What is the FY2019 fixed asset turnover ratio for Acme? Fixed asset turnover "
                "ratio is defined as: FY2019 revenue / (average PP&E between FY2018 and "
                "FY2019). Round your answer to two decimal places.")
    sheet = [h.segment for h in col.search_result("Property and equipment, net", k=5)[1]
             if "Property and equipment" in h.segment.text]
    assert sheet and compute(question, sheet) is None
    context = col.answer_context(sheet[:1], question)
    found = compute(question, context)
    assert found is not None and found.shown() == "24.26"  # 6,489 / ((253 + 282) / 2)
    assert any("Total net revenues" in b.text for b in context[1:])
    reply = answer(question, context, llm=None)
    assert reply.text.startswith("Fixed asset turnover ratio, FY2019: 24.26 — computed as")


@pytest.mark.parametrize(("text", "term"), [
    ("2021", False), ("52 Weeks Ended 52 Weeks Ended", False),
    ("(amounts in millions, except per share data)", False),
    ("INCOME BEFORE INCOME TAXES 6,680 5,367 4,765", False),
    ("--interval seconds", True), ("MAY", True), ("Net income", True), ("-n 10", True),
    ("0", True), ("3.1", True),  # an exit status, an exhibit's number
])
def test_a_statements_header_or_row_is_no_definition_term(text, term):
    """A bold first column or a bold column header sets text apart as a term is set (Costco's
    "2021" and "INCOME BEFORE INCOME TAXES 6,680 …" became terms of the statements' paths);
    a name is still a term, a month alone too ("MAY" in a standard's glossary), a number alone
    (an exit status, an exhibit's number)."""
    from hiqa.formats.pdf.terms import term_text

    assert term_text(text) is term


def test_a_blank_line_inside_a_block_ends_its_paragraph():
    """EDGAR's generator sets a page as one text block, its paragraphs and its headings parted
    by lines of no-break spaces: Corning's "Item 1. Business" and every Item after it were read
    into one paragraph per page, and its 10-K had no Items.  A blank line ends the paragraph;
    the parts get ids of their own, above the page's blocks."""
    from hiqa.formats.pdf.lines import page_lines

    def line(y: float, text: str, bold: bool = False) -> dict:
        span = {"text": text, "size": 10.0, "font": "Times-Bold" if bold else "Times-Roman",
                "flags": 16 if bold else 0, "bbox": (72, y, 300, y + 10)}
        return {"spans": [span], "bbox": (72, y, 300, y + 10), "dir": (1.0, 0.0)}

    page = {"blocks": [{"type": 0, "lines": [
        line(60, "PART I", bold=True), line(71, "\u00a0"),
        line(82, "This report contains forward-looking statements."),
        line(93, "They involve risks."), line(104, "\u00a0 "),
        line(115, "Item 1. Business", bold=True), line(126, "\u00a0"),
        line(137, "Acme traces its origins to a glass business.")]},
        {"type": 0, "lines": [line(700, "2")]}]}
    lines = page_lines(page, 2, block_base=10)
    blocks = [ln.block for ln in lines]
    assert [ln.text for ln in lines][:4] == [
        "PART I", "This report contains forward-looking statements.", "They involve risks.",
        "Item 1. Business"]
    assert blocks[0] == 10 and blocks[1] == blocks[2] != blocks[0]  # a paragraph of two lines
    assert len(set(blocks[:5])) == 4 and blocks[5] == 11  # the page number's own block
    assert min(blocks[1:5]) > 10 + len(page["blocks"])  # above the page's block ids
    single = {"blocks": [{"type": 0, "lines": [line(60, "One paragraph,"),
                                               line(71, "on two lines.")]}]}
    assert {ln.block for ln in page_lines(single, 1, 0)} == {0}


def test_a_statement_caption_read_as_a_term_is_a_sibling_of_the_others():
    """General Mills' type made its cash-flow caption a definition term, so the statement sat
    under the balance sheet (a term is one level below the heading before it): a caption is a
    heading one level below its Item, whatever the parser made of it."""
    from hiqa.formats.structure import _statement_captions

    events = [Heading(1, "Item 8. Financial Statements", 3),
              Block("text", "Consolidated Balance Sheets", 4),
              Block("text", "Total assets 30,111.2 30,624.0", 4),
              Heading(0, "Consolidated Statements of Cash Flows", 5, "term"),
              Block("text", "Net earnings 1,786.2 2,163.0", 5),
              Heading(0, "Net earnings", 5, "term"), Block("text", "As reported.", 5)]
    out = _statement_captions(events, dict.fromkeys(range(len(events)), 1))
    heads = [(e.level, e.title, e.kind) for e in out if isinstance(e, Heading)]
    assert heads == [(1, "Item 8. Financial Statements", "heading"),
                     (2, "Consolidated Balance Sheets", "heading"),
                     (2, "Consolidated Statements of Cash Flows", "heading"),
                     (0, "Net earnings", "term")]  # a term that is no caption stays one


def test_a_statements_name_inside_the_notes_is_no_caption():
    """Activision Blizzard's fair-value table heads a column "Balance Sheet / Classification":
    read as the balance sheet's caption, it made forty pages of notes a balance sheet.  Once
    the notes have begun, a statement captioned before them is not captioned again; the notes'
    running caption is not either, and a statement first captioned after them still is."""
    from hiqa.formats.structure import _statement_captions

    events = [Heading(1, "Item 8. Financial Statements", 3),
              Block("text", "Consolidated Balance Sheets", 4),
              Block("text", "Total assets 30,111.2 30,624.0", 4),
              Heading(2, "Notes to Consolidated Financial Statements", 5),
              Block("text", "Fair value measurements on a recurring basis.", 6),
              Block("text", "Balance Sheet", 6),
              Block("text", "Classification Money market funds 5,320", 6),
              Block("text", "Notes to Consolidated Financial Statements (continued)", 7),
              Block("text", "Condensed Statements of Cash Flows", 8),
              Block("text", "Net cash from operations 1,200", 8)]
    out = _statement_captions(events, dict.fromkeys(range(len(events)), 1))
    heads = [(e.level, e.title) for e in out if isinstance(e, Heading)]
    assert heads == [(1, "Item 8. Financial Statements"), (2, "Consolidated Balance Sheets"),
                     (2, "Notes to Consolidated Financial Statements"),
                     (2, "Condensed Statements of Cash Flows")]


def test_a_statement_s_header_table_heads_the_rows_printed_after_it(settings, tmp_path):
    """Corning's 2020 statements: the column header and the first rows are a table, the other
    rows lines of text after it.  HCA makes a section's text its first piece and its table the
    next, so joined in piece order the rows stood above their header, and no figure or measure
    was read off them: the answer's blocks and a measure's neighbouring sections are joined in
    the document's order."""
    from hiqa.answer.calc import compute

    (tmp_path / "acme-2020.md").write_text(
        "# Acme 10-K 2020\n\n## Item 8. Financial Statements\n\n"
        "### Consolidated Statements of Income\n\n"
        "| (In millions) | 2020 | 2019 |\n| --- | --- | --- |\n| Net sales | 11,303 | 11,503 |\n\n"
        "Cost of sales 7,772 7,468\n\nGross margin 3,531 4,035\n\n"
        "### Consolidated Balance Sheets\n\n"
        "| (In millions) | 2020 | 2019 |\n| --- | --- | --- |\n| Cash | 2,672 | 2,434 |\n\n"
        "Inventories 2,438 2,320\n\nTotal current assets 8,004 7,463\n\n"
        "#### Current liabilities:\n\nAccounts payable 1,174 1,587\n\n"
        "Total current liabilities 3,767 3,521\n", encoding="utf-8")
    col = Collection("ordered", settings, create=True)
    col.ingest([tmp_path / "acme-2020.md"])
    question = "How much were Acme's inventories at the end of FY2020?"
    sheet = [h.segment for h in col.search_result(question, k=5)[1]
             if h.segment.path[-1] == "Consolidated Balance Sheets"]
    blocks = col.answer_context(sheet[:1], question)
    assert answer(question, blocks, llm=None).text.startswith("Inventories, 2020: 2,438")
    dpo = ("What is Acme's FY2020 DPO? DPO is defined as: 365 * (average accounts payable "
           "between FY2019 and FY2020) / (FY2020 COGS + change in inventory between FY2019 "
           "and FY2020). Round your answer to two decimal places.")
    found = compute(dpo, col.answer_context(sheet[:1], dpo))
    assert found is not None  # COGS and accounts payable from the sections beside the sheet
    assert found.value == pytest.approx(365 * (1_174 + 1_587) / 2 / (7_772 + 2_438 - 2_320))


def test_a_statement_caption_where_the_notes_running_caption_stands_is_kept():
    """Pfizer's 10-Q sets each statement's caption at the top of its page, in the band where
    the notes' running caption stands on every page after them: the band read as a running
    header's, and the cash-flow statement lost its caption (its rows went to the equity
    statement).  A primary statement's caption is its page's title, never a running header;
    the notes' running caption and a chapter's varying header in that band still are."""
    from hiqa.formats.pdf.furniture import mark_furniture
    from hiqa.formats.pdf.lines import BODY, FURNITURE, Line

    def line(page: int, y: float, text: str) -> Line:
        return Line(page, page * 10 + int(y), 72, y, 400, y + 9, text, 9.0, False, False,
                    False, True)

    lines = []
    for page in range(1, 13):
        top = ("CONDENSED CONSOLIDATED STATEMENTS OF CASH FLOWS" if page == 2 else
               "CONDENSED CONSOLIDATED BALANCE SHEETS" if page == 1 else
               "Chapter summary for the quarter" if page == 12 else
               "NOTES TO CONDENSED CONSOLIDATED FINANCIAL STATEMENTS")
        lines += [line(page, 34, "ACME INC. AND SUBSIDIARY COMPANIES"), line(page, 45, top),
                  line(page, 200, f"Widgets sold well in every region in month {page}.")]
    mark_furniture(lines, [792.0] * 12, 9.0)
    roles = {(ln.page, ln.text): ln.role for ln in lines if ln.y0 == 45}
    assert roles[(2, "CONDENSED CONSOLIDATED STATEMENTS OF CASH FLOWS")] == BODY
    assert roles[(1, "CONDENSED CONSOLIDATED BALANCE SHEETS")] == BODY
    assert roles[(3, "NOTES TO CONDENSED CONSOLIDATED FINANCIAL STATEMENTS")] == FURNITURE
    assert roles[(12, "Chapter summary for the quarter")] == FURNITURE
