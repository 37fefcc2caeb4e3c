"""Statement figures with their row label, column year and page (issue #46, item 4)."""
from __future__ import annotations

from hiqa.answer.cited import answer, build_context
from hiqa.answer.figures import asked_years, pick_figures, rows
from hiqa.model import Segment

STATEMENTS = """NIKE, INC.

CONSOLIDATED STATEMENTS OF INCOME

YEAR ENDED MAY 31,

(In millions, except per share data) 2019 2018 2017

Revenues $ 39,117 $ 36,397 $ 34,350

Cost of sales 21,643 20,441 19,038

Other (income) expense, net (78) 66 (196)

Earnings per common share:

Basic $ 2.55 $ 1.19 $ 2.56

Diluted $ 2.49 $ 1.17 $ 2.51

CONSOLIDATED BALANCE SHEETS

(Dollars in millions) 2019 2018

| ASSETS |  |  |  |
| --- | --- | --- | --- |
| Current assets: |  |  |  |
| Cash and equivalents | $ | 4,466 | $ 4,249 |
| Inventories | 5,622 |  | 5,261 |
| Total current assets | 16,525 |  | 15,134 |
| TOTAL ASSETS | $ | 23,717 | $ 22,536 |
"""


def segment(text: str, source: str = "nike-2019.pdf", pages: tuple[int, ...] = (54,)) -> Segment:
    return Segment("s1", "nike-2019.pdf", "Nike — Form 10-K, fiscal year 2019", source,
                   ("Nike — Form 10-K, fiscal year 2019", "Item 8"), 1, 1, 0, pages, text, text,
                   False, "hca", (0, len(text)))


def texts(question: str, segs: list[Segment]) -> list[str]:
    return [f.text() for f in pick_figures(question, segs)]


def test_rows_keep_labels_years_signs_and_groups():
    found = {(r.group, r.label): r for r in rows([segment(STATEMENTS)])}
    assert found[("", "Other (income) expense, net")].values == ("(78)", "66", "(196)")
    assert found[("", "Revenues")].years == ("2019", "2018", "2017")
    assert found[("Earnings per common share", "Diluted")].values == ("2.49", "1.17", "2.51")
    cash = found[("Current assets", "Cash and equivalents")]
    assert cash.values == ("4,466", "4,249") and cash.years == ("2019", "2018")


def test_the_question_picks_row_and_year():
    segs = [segment(STATEMENTS)]
    assert texts("How much total current assets did Nike have at the end of FY2019?", segs)[0] \
        == "Total current assets, 2019: 16,525 — Consolidated Balance Sheets, p. 54"
    assert texts("What is Nike's FY2018 revenue?", segs)[0] \
        == "Revenues, 2018: 36,397 — Consolidated Statements Of Income, p. 54"
    assert texts("What were inventories in 2018?", segs)[0].startswith(
        "Current assets: Inventories, 2018: 5,261")
    assert texts("diluted earnings per share in FY17", segs)[0].startswith(
        "Earnings per common share: Diluted, 2017: 2.51")
    assert texts("What was other (income) expense, net?", segs)[0].startswith(
        "Other (income) expense, net, 2019: (78)")  # no year named: the latest column


def test_a_label_in_the_past_tense_meets_the_question_s_verb():
    """"Dividends paid" is what a company "paid out" or "pays" in dividends: the stemmer keeps
    the irregular "paid" apart from "pay", so the row held half the label's words only."""
    segs = [segment("CONSOLIDATED STATEMENTS OF CASH FLOWS\n\n(In millions) 2020 2019\n\n"
                    "Dividends paid (389) (353)\n\nNet cash used in financing activities (12) 40")]
    assert texts("How much did the company pay out in cash dividends in FY2020?", segs)[0] \
        .startswith("Dividends paid, 2020: (389)")


def test_no_figure_without_a_period_header_or_a_matching_row():
    man = segment("-n, --lines 10\n\nprint the first 10 lines\n\nVersion 3.2 1 2\n",
                  source="head.1.md", pages=())
    assert texts("how many lines does it print by default", [man]) == []
    assert texts("What is the weather in 2019?", [segment(STATEMENTS)]) == []


def test_the_extractive_answer_quotes_the_figure_with_its_citation():
    prose = segment("Revenue grew on higher volumes. Gross margin rose by 50 basis points.")
    reply = answer("What were Nike's total current assets in FY2018?",
                   [prose, segment(STATEMENTS)], llm=None)
    assert reply.text.startswith(
        "Total current assets, 2018: 15,134 — Consolidated Balance Sheets, p. 54 [2]")
    assert 2 in reply.citations and reply.mode == "extractive"


def test_a_word_that_labels_many_rows_or_a_prose_line_names_no_figure():
    text = ("(Dollars in millions) 2020 2019\n\nTOTAL 2,261 1,900\n\nTotal assets 5 4\n\n"
            "Total current assets 3 2\n\npresents the nonrecurring losses recognized for the "
            "years ended December 31 due to impairment:\n\nProperty, plant and equipment 8 7\n")
    assert texts("What were total operating expenses?", [segment(text)]) == []
    [pp] = texts("What was property, plant and equipment in 2019?", [segment(text)])
    assert pp.startswith("Property, plant and equipment, 2019: 7")


def test_a_header_joined_to_its_first_row_and_a_units_note_in_the_path():
    """As EDGAR's statements come out of the PDF reader: the years and the first row on one
    line, the rows under a term "(in millions)" below the statement's caption."""
    text = ("Year Ended December 31,\n\n2017 2018 2019 Net income $ 3,033 $ 10,073 $ 11,588\n\n"
            "Other comprehensive income (loss):\n\nForeign currency translation adjustments 533 "
            "(538) 78\n")
    caption = "CONSOLIDATED STATEMENTS OF COMPREHENSIVE INCOME"
    seg = Segment("s1", "a.pdf", "Amazon — Form 10-K, fiscal year 2019", "a.pdf",
                  ("Amazon — Form 10-K, fiscal year 2019", "Item 8", caption, "(in millions)"),
                  3, 1, 0, (39,), text, text, False, "hca", (0, len(text)))
    assert texts("What is Amazon's FY2019 net income?", [seg])[0] == (
        "Net income, 2019: 11,588 — CONSOLIDATED STATEMENTS OF COMPREHENSIVE INCOME, p. 39")


def test_the_llm_reads_rows_printed_as_text_as_a_table_of_years():
    text = ("Year Ended December 31,\n\n2017 2018 2019 Net income $ 3,033 $ 10,073 $ 11,588\n\n"
            "Basic earnings per share $ 6.32 $ 20.68 $ 23.46\n")
    seg = Segment("s1", "a.pdf", "Amazon — Form 10-K, fiscal year 2019", "a.pdf",
                  ("Amazon — Form 10-K, fiscal year 2019", "Item 8", "Statements"),
                  3, 1, 0, (38,), text, text, False, "hca", (0, len(text)))
    context = build_context([seg])
    assert ("The figures of [1] by row and year:\n| row | 2017 | 2018 | 2019 |\n|---|---|---|---|\n"
            "| Net income | 3,033 | 10,073 | 11,588 |\n"
            "| Basic earnings per share | 6.32 | 20.68 | 23.46 |") in context
    # a block that is a table already, or holds no statement row, gets nothing more
    table = segment("| | 2019 | 2018 |\n|---|---|---|\n| Total current assets | 16,525 | 15,134 |")
    prose = segment("Revenue grew in every region.")
    assert "The figures of" not in build_context([table, prose])


def test_a_ratio_gets_each_cell_it_needs_by_the_names_analysts_give_the_rows():
    """Item 4: a ratio is answered with the labelled cells it needs: the rows by the names a
    question gives them ("COGS" is printed "Cost of sales", "inventory" "Inventories"), every
    year it names, a range with the years inside it; nothing computed."""
    segs = [segment(STATEMENTS)]
    turnover = texts("What is Nike's FY2019 inventory turnover ratio? Inventory turnover is "
                     "(FY2019 COGS) / (average inventory between FY2018 and FY2019).", segs)
    assert "Cost of sales, 2019: 21,643; 2018: 20,441 — Consolidated Statements Of Income, " \
           "p. 54" in turnover
    assert "Current assets: Inventories, 2019: 5,622; 2018: 5,261 — Consolidated Balance " \
           "Sheets, p. 54" in turnover
    average = texts("What is Nike's three year average of cost of goods sold as a % of revenue "
                    "from FY2017 to FY2019?", segs)
    where = " — Consolidated Statements Of Income, p. 54"
    assert average[:2] == ["Revenues, 2019: 39,117; 2018: 36,397; 2017: 34,350" + where,
                           "Cost of sales, 2019: 21,643; 2018: 20,441; 2017: 19,038" + where]
    assert asked_years("the FY2019 - FY2021 3 year average") == ["2019", "2021", "2020"]
    assert not any("Net" in t for t in average)  # "revenue" names no other row


def test_rows_of_a_row_group_section_get_their_statements_column_header():
    """A statement set as lines splits into a section per row group ("Current liabilities:");
    only the first holds the years.  The answer's block gets them from the sections before
    it inside the same statement, never from another statement's."""
    from hiqa.answer.figures import headed

    sheet = ("Amazon — Form 10-K, fiscal year 2017", "Item 8", "CONSOLIDATED BALANCE SHEETS")

    def seg(path: tuple[str, ...], text: str, order: int) -> Segment:
        return Segment(f"s{order}", "a.pdf", path[0], "a.pdf", path, len(path), order, 0, (40,),
                       text, text, False, "hca", (0, len(text)))

    first = seg((*sheet, "Current assets:"), "December 31, 2016 2017\n\nCash 19,334 20,522", 5)
    rest = seg((*sheet, "Current liabilities:"), "Accounts payable $ 25,309 $ 34,616", 6)
    other = seg(("Amazon — Form 10-K, fiscal year 2017", "Item 8",
                 "CONSOLIDATED STATEMENTS OF OPERATIONS"), "2015 2016 2017\n\nNet sales 1 2 3", 4)
    assert texts("What were accounts payable in 2016?", [rest]) == []  # no year: no figure
    block = headed(rest, [first, other])
    assert block.text.startswith("December 31, 2016 2017\n\n")
    assert texts("What were accounts payable in 2016?", [block])[0].startswith(
        "Accounts payable, 2016: 25,309")
    assert headed(rest, [other]) == rest  # another statement's header is not its own


def test_a_row_group_made_a_sibling_of_the_statements_caption_gets_its_header():
    """A reader may make a row group a sibling of the statement's caption ("Liabilities and
    Stockholders' Equity" beside "Consolidated Balance Sheets", both under the Item): the rows
    still continue the statement, through sections that are all rows; prose stops the search."""
    from hiqa.answer.figures import headed

    item = ("Netflix — Form 10-K, fiscal year 2017", "Item 15")

    def seg(path: tuple[str, ...], text: str, order: int) -> Segment:
        return Segment(f"s{order}", "n.pdf", path[0], "n.pdf", path, len(path), order, 0, (45,),
                       text, text, False, "hca", (0, len(text)))

    sheet = seg((*item, "Consolidated Balance Sheets"),
                "As of December 31, 2017 2016\n\nTotal assets 19,012,742 13,586,610", 7)
    equity = seg((*item, "Liabilities and Stockholders' Equity"), "LIABILITIES\n\nCurrent "
                 "liabilities:\n\nDeferred revenue 618,622 443,472", 8)
    current = seg((*item, "Liabilities and Stockholders' Equity", "Current liabilities"),
                  "Total current liabilities 5,466,312 4,586,657", 9)
    prose = seg((*item, "Revolving Credit Facility"), "The Company entered into a credit "
                "agreement. Borrowings bear interest at a floating rate.", 8)
    block = headed(current, [equity, sheet])
    assert block.text.startswith("As of December 31, 2017 2016\n\n")
    assert texts("What were total current liabilities in FY2017?", [block])[0].startswith(
        "Total current liabilities, 2017: 5,466,312")
    assert headed(current, [prose, sheet]) == current  # prose between: not the same statement
    assert headed(current, [equity]) == current  # no statement's header before it


def test_a_header_printed_a_date_per_line_heads_the_rows_below_it():
    """Adobe prints each column's date on lines of its own ("November 27," / "2015" / …):
    the years read as one header when nothing but dates and header words stands between
    them and the rows; years in prose above the rows head nothing."""
    stacked = ("(In thousands)\n\nYears Ended\n\nNovember 27,\n\n2015\n\nNovember 28,\n\n2014\n\n"
               "November 29,\n\n2013\nCash flows from operating activities:\nNet cash provided "
               "by operating activities … 1,469,502 1,287,482 1,151,686")
    assert texts("What was operating cash flow in FY2014?", [segment(stacked)])[0].startswith(
        "Cash flows from operating activities: Net cash provided by operating activities, 2014: "
        "1,287,482")
    fiscal = "Fiscal\n\n2015 Fiscal\n\n2014\nNet cash provided by operating activities … 1,469.5 1,287.5"
    assert rows([segment(fiscal)])[0].years == ("2015", "2014")
    last_joined = ("Years Ended\n\nDecember 1,\n\n2017 December 2,\n\n2016 November 27,\n\n2015 Cash "
                   "flows from operating activities:\n\nNet cash provided by operating activities "
                   "2,912,853 2,199,728 1,469,502")  # the last year begins the next line
    assert rows([segment(last_joined)])[0].years == ("2017", "2016", "2015")
    prose = ("Revenue grew in fiscal 2015.\n\nIt fell in 2014.\n\nNet cash provided by operating "
             "activities … 1,469.5 1,287.5")
    assert rows([segment(prose)]) == []


def test_a_header_row_taken_for_the_rows_heading_heads_them():
    """CVS: the line "In millions, except per share amounts 2018 2017" became the heading of
    the balance sheet's rows; the rows read their years from their path."""
    from dataclasses import replace

    from hiqa.answer.figures import headed

    rows_only = segment("Total current assets 45,243 31,229")
    block = replace(rows_only, path=(*rows_only.path, "Consolidated Balance Sheets",
                                     "In millions, except per share amounts 2018 2017"))
    assert texts("What were total current assets in 2017?", [rows_only]) == []
    assert texts("What were total current assets in 2017?", [headed(block, [])])[0].startswith(
        "Total current assets, 2017: 31,229")


def test_a_header_of_dates_joined_to_the_first_row_heads_the_rows():
    """Kraft Heinz: "December 28, 2019 December 29, 2018 Net sales $ 24,977 $ 26,268" — the
    column dates and the first row on one line."""
    joined = ("December 28, 2019 December 29, 2018 Net sales $ 24,977 $ 26,268\n\n"
              "Cost of products sold 16,830 17,347")
    assert texts("What was the cost of products sold in 2018?", [segment(joined)])[0].startswith(
        "Cost of products sold, 2018: 17,347")
    assert texts("What were net sales in 2019?", [segment(joined)])[0].startswith(
        "Net sales, 2019: 24,977")
