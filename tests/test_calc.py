"""A measure computed from the statement cells it needs, its formula shown (issue #46, item 4)."""
from __future__ import annotations

from dataclasses import replace

import pytest

from hiqa.answer.calc import asks_for_measure, compute, number, statement_rows
from hiqa.answer.cited import answer, build_messages
from hiqa.model import Segment

CASH_FLOWS = """CONSOLIDATED STATEMENTS OF CASH FLOWS

(in millions) 2016 2017

Net income 2,371 3,033

Changes in operating assets and liabilities:

Inventories (1,426) (3,583)

Accounts payable 5,030 7,175
"""
INCOME = """CONSOLIDATED STATEMENTS OF OPERATIONS

(in millions) 2015 2016 2017

Total net sales 107,006 135,987 177,866

Operating expenses:

Cost of sales 71,651 88,265 111,934

Operating income 2,233 4,186 4,106
"""
BALANCE = """CONSOLIDATED BALANCE SHEETS

(in millions) 2016 2017

Current assets:

Inventories 11,461 16,047

Accounts receivable, net and other 8,339 13,164

Total current assets 45,781 60,197

Current liabilities:

Accounts payable 25,309 34,616

Total current liabilities 43,816 57,883
"""


def block(text: str, caption: str, doc: str = "amazon-2017.pdf", order: int = 1,
          page: int = 38) -> Segment:
    path = ("Amazon — Form 10-K, fiscal year 2017", "Item 8", caption)
    return Segment(f"{doc}-{order}", doc, path[0], doc, path[1:], 3, order, 0, (page,), text,
                   text, False, "hca", (0, len(text)))


CONTEXT = [block(CASH_FLOWS, "Consolidated Statements of Cash Flows", order=3),
           block(INCOME, "Consolidated Statements of Operations", order=1),
           block(BALANCE, "Consolidated Balance Sheets", order=2)]
DPO = ("What is Amazon's FY2017 days payable outstanding (DPO)? DPO is defined as: 365 * "
       "(average accounts payable between FY2016 and FY2017) / (FY2017 COGS + change in "
       "inventory between FY2016 and FY2017). Round your answer to two decimal places.")


def test_a_stated_formula_is_computed_from_the_balance_sheet_and_the_income_statement():
    found = compute(DPO, CONTEXT)
    assert found is not None and found.shown() == "93.86"
    expected = 365 * (25_309 + 34_616) / 2 / (111_934 + 16_047 - 11_461)
    assert found.value == pytest.approx(expected)
    text = found.text()
    assert text.startswith("DPO, FY2017: 93.86 — computed as 365 * ( average accounts payable")
    # the change in inventory is the balance sheet's two year-ends, not the cash-flow line
    assert "Current assets: Inventories 2016: 11,461 [3]" in text
    assert "Inventories 2017: 16,047 [3]" in text and "(3,583)" not in text
    assert "Operating expenses: Cost of sales 2017: 111,934 [2]" in text


@pytest.mark.parametrize(("question", "shown"), [
    (("What is Amazon's year-over-year change in revenue from FY2016 to FY2017 (in units of "
     "percents and round to one decimal place)?"), "30.8%"),
    ("What is the FY2015 - FY2017 total revenue growth rate for Amazon? Answer in percents.",
     "66.2%"),
    (("What is Amazon's 2 year total revenue CAGR from FY2015 to FY2017 (in units of percents "
     "and round to one decimal place)?"), "28.9%"),
    (("What is the FY2015 - FY2017 3 year average unadjusted operating income % margin for "
     "Amazon? Round to one decimal place."), "2.5%"),
    (("What is Amazon's FY2017 working capital ratio? Define working capital ratio as total "
     "current assets divided by total current liabilities. Round your answer to two decimal "
     "places."), "1.04"),
    (("What is Amazon's FY2017 net working capital? Define net working capital as total current "
     "assets less total current liabilities. Answer in USD millions."), "2,314.00"),
])
def test_measures_named_or_defined(question, shown):
    assert asks_for_measure(question)
    found = compute(question, CONTEXT)
    assert found is not None and found.shown() == shown


def test_a_measure_defined_by_others_defined_after_it():
    question = ("What is the FY2017 cash conversion cycle (CCC) for Amazon? CCC is defined as: "
                "DIO + DSO - DPO. DIO is defined as: 365 * (average inventory between FY2016 "
                "and FY2017) / (FY2017 COGS). DSO is defined as: 365 * (average accounts "
                "receivable between FY2016 and FY2017) / (FY2017 Revenue). DPO is defined as: "
                "365 * (average accounts payable between FY2016 and FY2017) / (FY2017 COGS + "
                "change in inventory between FY2016 and FY2017). Round your answer to two "
                "decimal places.")
    dio = 365 * (11_461 + 16_047) / 2 / 111_934
    dso = 365 * (8_339 + 13_164) / 2 / 177_866
    dpo = 365 * (25_309 + 34_616) / 2 / (111_934 + 16_047 - 11_461)
    found = compute(question, CONTEXT)
    assert found is not None and found.value == pytest.approx(dio + dso - dpo)


def test_nothing_is_computed_without_every_cell_or_from_two_filings():
    income_only = [CONTEXT[1]]
    assert compute(DPO, income_only) is None  # no accounts payable, no inventories
    other = [replace(b, doc_id="globex-2017.pdf") for b in CONTEXT[2:]]
    assert compute(DPO, income_only + other) is None  # another filing's balance sheet
    assert compute("What were Amazon's net sales in 2017?", CONTEXT) is None  # no measure
    assert not asks_for_measure("Is Amazon's business seasonal?")


def test_cells():
    assert number("(1,577)") == -1577 and number("$ 4,466") == 4466 and number("—") == 0
    assert number("12.5%") == 12.5


def test_the_context_gets_the_statement_section_holding_a_missing_cell():
    """A balance sheet set as lines is a section per row group: the block with accounts
    payable is retrieved, the one with inventories is not; the answer's context gets it."""
    current_assets = block(BALANCE.split("Current liabilities:")[0], "Consolidated Balance "
                           "Sheets", order=5, page=40)
    liabilities = block("(in millions) 2016 2017\n\nCurrent liabilities:"
                        + BALANCE.split("Current liabilities:")[1],
                        "Consolidated Balance Sheets", order=6, page=40)
    blocks = [liabilities, CONTEXT[1]]
    asked: list[tuple[int, ...]] = []

    def sections(seg: Segment, orders):
        asked.append(tuple(orders))
        return [s for s in (current_assets, block("Notes text 2016 2017", "Note 1",
                                                  order=7)) if s.order in orders]

    assert compute(DPO, blocks) is None
    context = statement_rows(DPO, blocks, sections)
    assert context == [liabilities, CONTEXT[1], current_assets]
    assert 5 in asked[0] and 6 not in asked[0]
    reply = answer(DPO, context, llm=None)
    assert reply.text.startswith("DPO, FY2017: 93.86 — computed as")
    assert "Inventories 2016: 11,461 [3]" in reply.text and reply.citations[:3] == (1, 2, 3)
    assert statement_rows("Is Amazon's business seasonal?", blocks, sections) == blocks
    # rows the reader made a sibling of the statement's caption are searched too
    sibling = replace(current_assets, path=(current_assets.path[0], "Item 8", "Assets"), order=4)
    assert statement_rows(DPO, blocks, lambda seg, orders: [sibling])[-1] == sibling


def test_the_llm_gets_the_computation_after_the_context():
    user = build_messages(DPO, CONTEXT)[1]["content"]
    context, worked = user.split("\n\nComputed from the cells of the blocks: ")
    assert "[3] Amazon — Form 10-K, fiscal year 2017 > Item 8 > Consolidated Balance" in context
    assert worked.startswith("DPO, FY2017: 93.86 — computed as")
    assert "Question: What is Amazon's FY2017 days payable" in worked
    assert "Computed from" not in build_messages("Is it seasonal?", CONTEXT)[1]["content"]


def test_an_operand_is_its_line_item_or_none():
    """"Total assets" is no "total current assets": with only the former in the context
    nothing is computed, with both the latter is read."""
    ratio = ("What is Amazon's FY2017 working capital ratio? Define working capital ratio as "
             "total current assets divided by total current liabilities.")
    totals = block("(in millions) 2016 2017\n\nTotal assets 83,402 131,310\n\n"
                   "Total current liabilities 43,816 57,883", "Consolidated Balance Sheets")
    assert compute(ratio, [totals]) is None
    found = compute(ratio, [block(BALANCE, "Consolidated Balance Sheets")])
    assert found is not None and found.shown() == "1.04"  # 60,197 / 57,883


def test_a_missing_cell_is_searched_for_in_the_best_blocks_filing():
    """Neither the blocks nor their neighbours hold the revenue; the filing's search for it
    (by the words statements print for "revenue") does; another filing's rows never count."""
    turnover = ("What is Amazon's FY2017 asset turnover? Asset turnover is defined as: FY2017 "
                "revenue / total current assets.")
    sheet = block(BALANCE, "Consolidated Balance Sheets", order=40, page=40)
    discussion = block("(in millions) 2016 2017\n\nConsolidated net revenues (1,011) (13)%",
                       "Item 7", order=3, page=20)
    income = block(INCOME, "Consolidated Statements of Operations", order=38, page=38)
    other = replace(income, doc_id="globex-2017.pdf", order=2)
    searched: list[str] = []

    def find(seg: Segment, text: str) -> list[Segment]:
        searched.append(text)
        return [other, discussion, income]

    context = statement_rows(turnover, [sheet], lambda seg, orders: [], find)
    assert context == [sheet, income]
    assert searched[0].startswith("revenue ") and "sales" in searched[0]
    assert searched[0].endswith(" 2017")
    found = compute(turnover, context)
    assert found is not None and found.shown() == "2.95"  # 177,866 / 60,197
    assert statement_rows(turnover, [sheet], lambda seg, orders: [], lambda s, t: [other]) \
        == [sheet]


def test_ebitda_is_operating_income_plus_the_cash_flow_statements_d_and_a():
    cash = block("(in millions) 2016 2017\n\nDepreciation and amortization 5,646 8,831",
                 "Consolidated Statements of Cash Flows", order=3)
    context = [block(INCOME, "Consolidated Statements of Operations", order=2), cash]
    found = compute("What is Amazon's FY2017 unadjusted EBITDA in USD millions?", context)
    assert found is not None and found.shown() == "12,937"  # 4,106 + 8,831
    assert found.formula == "operating income + depreciation and amortization"
    margin = compute("What is Amazon's FY2017 unadjusted EBITDA % margin?", context)
    assert margin is not None and margin.shown() == "7.3%"  # 12,937 / 177,866
    assert compute("What is Amazon's FY2017 unadjusted EBITDA?", context[:1]) is None


def test_a_statements_row_before_a_discussion_tables_row_of_the_same_name():
    """An MD&A table's "Inventories" row holds a change; the balance sheet's the balance."""
    inventory = ("What is Amazon's FY2017 inventory turnover? Inventory turnover is defined "
                 "as: FY2017 COGS / (average inventory between FY2016 and FY2017).")
    discussion = replace(block("(in millions) 2016 2017\n\nInventories 15.6 53.7", "Inventory "
                               "trends", order=2), path=("Amazon — Form 10-K, fiscal year 2017",
                                                         "Item 7", "Inventory trends"))
    context = [discussion, block(INCOME, "Consolidated Statements of Operations", order=3)]
    only_discussion = compute(inventory, context)
    assert only_discussion is not None  # with nothing better, any table's row is read
    found = compute(inventory, [*context, block(BALANCE, "Consolidated Balance Sheets", order=4)])
    assert found is not None and found.shown() == "8.14"  # 111,934 / ((11,461 + 16,047) / 2)


def test_a_figure_is_also_given_in_the_unit_the_question_asks():
    from hiqa.answer.figures import asked_unit, pick_figures

    thousands = block("(In thousands)\n\n2019 2020\n\nNet cash provided by operating activities "
                      "465,699 381,603", "Consolidated Statements of Cash Flows")
    question = ("How much did Square generate in cash flow from operating activities in FY2020? "
                "Answer in USD millions.")
    assert asked_unit(question) == "millions" and asked_unit("What was it in 2020?") == ""
    [figure, *_] = pick_figures(question, [thousands])
    assert figure.in_unit("millions") == "= $382 million"
    assert figure.in_unit("billions") == "= $0.38 billion"
    assert figure.in_unit("thousands") == ""  # printed so already
    reply = answer(question, [thousands], llm=None)
    assert "2020: 381,603 — Consolidated Statements of Cash Flows, p. 38 [1] = $382 million" \
        in reply.text


def test_an_average_balance_is_never_read_off_the_cash_flow_statement():
    """General Mills: the reader nested the cash-flow statement under the balance sheet's
    caption; its "Inventories" line is a change and was averaged as a balance (CCC -12.73).
    The rows' own statement is the deepest caption of their path."""
    dio = ("What is Amazon's FY2017 DIO? DIO is defined as: 365 * (average inventory between "
           "FY2016 and FY2017) / (FY2017 COGS).")
    nested = replace(block(CASH_FLOWS, "Consolidated Statements of Cash Flows"),
                     path=("Amazon — Form 10-K, fiscal year 2017", "Item 8",
                           "Consolidated Balance Sheets", "Consolidated Statements of Cash Flows"))
    income = block(INCOME, "Consolidated Statements of Operations", order=2)
    assert compute(dio, [nested, income]) is None
    found = compute(dio, [nested, income, block(BALANCE, "Consolidated Balance Sheets", order=3)])
    assert found is not None and found.shown() == "44.85"  # 365 * 13,754 / 111,934
    assert "Inventories 2016: 11,461 [3]" in found.text()


def test_accounts_receivable_and_payable_by_the_labels_filers_print():
    """"Receivables" (General Mills) and "Trade payables" (Kraft Heinz) are the accounts a
    formula calls accounts receivable and accounts payable; "Income taxes receivable" is not."""
    sheet = block("(in millions) 2016 2017\n\nIncome taxes receivable 90 95\n\nReceivables 8,339 "
                  "13,164\n\nTrade payables 25,309 34,616", "Consolidated Balance Sheets")
    ratio = ("What is Amazon's FY2017 payables ratio? Payables ratio is defined as: FY2017 "
             "accounts payable / FY2017 accounts receivable.")
    found = compute(ratio, [sheet])
    assert found is not None and found.shown() == "2.63"  # 34,616 / 13,164


def test_a_row_equal_to_another_filings_row_is_still_its_own():
    """Adobe's 2015 and 2016 10-Ks both print FY2015's operating income, 903,095; the 2015
    filing's block came first and the 2016 filing's equal cell was dropped as a repeat, so the
    2016 filing had no FY2015 operating income for the change asked of it."""
    growth = "What is the change in operating income from FY2015 to FY2016?"
    older = block("(in thousands) 2013 2014 2015\n\nOperating income 422,723 412,685 903,095",
                  "Consolidated Statements of Income", doc="adobe-2015.pdf")
    newer = block("(in thousands) 2014 2015 2016\n\nOperating income 412,685 903,095 1,493,602",
                  "Consolidated Statements of Income", doc="adobe-2016.pdf", order=2)
    found = compute(growth, [older, newer])
    assert found is not None and found.shown() == "65.4%"
    assert {o.figure.row.block for o in found.operands} == {2}  # both cells from one filing


def test_a_measure_named_without_its_formula_is_computed_by_the_textbook_s():
    """"Does Corning have positive working capital?": the question names the measure and
    defines nothing; working capital is current assets less current liabilities, computed
    from the balance sheet's rows with the formula shown.  A "working capital ratio" is the
    ratio, not the difference; a question's own definition wins over the textbook's."""
    found = compute("Does Amazon have positive working capital based on FY2017 data?", CONTEXT)
    assert found is not None and found.value == 60_197 - 57_883
    assert found.formula == "total current assets - total current liabilities"
    ratio = compute("What is Amazon's FY2017 working capital ratio?", CONTEXT)
    assert ratio is not None and ratio.value == pytest.approx(60_197 / 57_883)
    defined = compute("What is Amazon's FY2017 working capital? Define working capital as "
                      "total current assets.", CONTEXT)
    assert defined is not None and defined.value == 60_197
