"""Naming on evidence (issue #45): a keyword puts its document first only when the question uses
it as a name — by the keyword's shape, by the question's form, or because the collection does not
use it as an ordinary word."""
from __future__ import annotations

import pytest

from hiqa.collection import Collection
from hiqa.keywords.naming import ORDINARY_SPREAD, named_by_form, named_by_shape, naming


@pytest.mark.parametrize(("keyword", "expected"), [
    ("wait", False), ("Boeing", False), ("3.2", True), ("FY2018", True), ("b2sum", True),
    ("Best Buy", True), ("add-apt-repository", True), ("wait(2)", True), ("ls", False),
])
def test_shape(keyword: str, expected: bool) -> None:
    assert named_by_shape(keyword) is expected


@pytest.mark.parametrize(("question", "pointed"), [
    ("what does wait(2) return on error?", True),
    ("what does `wait` return on error?", True),
    ("what does “wait” return on error?", True),
    ("wait: return value on error", True),
    ("  Wait : return value on error", True),
    ("what does the wait page say about errors?", True),
    ("which options does the kill command take?", True),
    ("wait for an I/O event on a file descriptor", False),
    ("do not wait: return at once", False),
    ("how long to wait (seconds) before retrying", False),
    ("a waiting process", False),
])
def test_form(question: str, pointed: bool) -> None:
    keyword = "kill" if "kill" in question else "wait"
    assert bool(named_by_form(question, keyword)) is pointed


@pytest.mark.parametrize(("question", "keyword", "pointed"), [
    ("How much has the effective tax rate of Corning changed?", "Corning", True),
    ("What is Block's (formerly known as Square) FY2020 revenue?", "Square", True),
    ("Has Amazon grown its net sales?", "Amazon", True),
    ("has amazon grown its net sales?", "Amazon", False),  # no capital, nothing said
    ("Corning's margin in FY2022?", "Corning", False),  # a sentence's first word
    ("Revenue fell. Corning's margin too?", "Corning", False),
    ("What Does Wait Return On Error?", "wait", False),  # title case
    ("WHAT DOES WAIT RETURN ON ERROR?", "wait", False),  # capitals
])
def test_a_capital_mid_sentence_points_at_a_name(question: str, keyword: str,
                                                 pointed: bool) -> None:
    assert bool(named_by_form(question, keyword)) is pointed


def test_a_plain_word_is_a_name_unless_the_collection_uses_it_widely() -> None:
    question = "wait for an I/O event on a file descriptor"
    seen: list[str] = []

    def spread(share: float):
        def f(keyword: str) -> float:
            seen.append(keyword)
            return share
        return f

    assert naming(question, "wait", spread(ORDINARY_SPREAD + 0.01)).strong is False
    weak = naming(question, "wait", spread(0.4))
    assert weak.message() == ("'wait' is also an ordinary word here: not taken as a name "
                              "(used in 40% of the other documents)")
    assert naming(question, "wait", spread(ORDINARY_SPREAD)).strong is True
    seen.clear()
    assert naming("wait(2): errors", "wait", spread(1.0)).strong is True  # form decides
    assert naming(question, "3.2", spread(1.0)).strong is True  # shape decides
    assert seen == []  # the collection is asked only when nothing else says


PAGES = {
    "wait.2.md": ("wait(2)", "wait, waitpid - wait for process to change state",
                  ("The wait() system call suspends execution of the calling thread until one of "
                  "its children terminates.")),
    "poll.2.md": ("poll(2)", "poll - wait for some event on a file descriptor",
                  ("poll() waits for one of a set of file descriptors to become ready to perform "
                  "I/O. It blocks until an event occurs on a file descriptor.")),
    "sleep.1.md": ("sleep(1)", "sleep - delay for a specified amount of time",
                   "Pause for NUMBER seconds. The shell will wait until the delay is over."),
    "timeout.1.md": ("timeout(1)", "timeout - run a command with a time limit",
                     ("Start COMMAND, and kill it if still running after DURATION; it does not "
                     "wait longer than that.")),
    "flock.1.md": ("flock(1)", "flock - manage locks from shell scripts",
                   ("By default, if the lock cannot be acquired, flock will wait until the lock "
                   "is available.")),
    "xxd.1.md": ("xxd(1)", "xxd - make a hexdump or do the reverse",
                 "xxd creates a hex dump of a given file or standard input."),
}


def page(title: str, name: str, body: str) -> str:
    return f"# {title}\n\n## NAME\n\n{name}\n\n## DESCRIPTION\n\n{body}\n\n## ERRORS\n\nEINTR\n"


def man_collection(settings, folder, pages: dict[str, tuple[str, str, str]]) -> Collection:
    """Collection ``folder.name`` of ``pages`` (file -> title, NAME line, DESCRIPTION), indexed."""
    folder.mkdir()
    for file, (title, name, body) in pages.items():
        (folder / file).write_text(page(title, name, body), encoding="utf-8")
    col = Collection(folder.name, settings, create=True)
    col.ingest([folder])
    return col


@pytest.fixture
def pages(settings, tmp_path):
    return man_collection(settings, tmp_path / "man", PAGES)


def test_a_page_named_by_an_ordinary_word_is_not_put_first_by_a_question_using_the_word(pages):
    result, hits = pages.search_result("wait for some event on a file descriptor", k=3)
    assert result.named == {}
    assert [n.keyword for n in result.not_names] == ["wait"]
    assert "ordinary word" in result.not_names[0].message()
    assert hits[0].segment.doc_id == "poll.2.md"
    matches = result.candidates.matches
    assert matches.max() == 1  # Eq. 2's soft bonus stays


@pytest.mark.parametrize("question", [
    "wait(2): wait for some event on a file descriptor",
    "what does the wait page say about an event on a file descriptor?",
    "wait: some event on a file descriptor",
])
def test_a_question_naming_the_page_still_puts_it_first(pages, question):
    result, hits = pages.search_result(question, k=3)
    assert result.named_document == "wait.2.md"
    assert result.not_names == ()
    assert hits[0].segment.doc_id == "wait.2.md"


def test_a_name_the_collection_does_not_use_as_a_word_names_without_help(pages):
    result, hits = pages.search_result("make a hexdump with xxd", k=3)
    assert result.named_document == "xxd.1.md"
    assert hits[0].segment.doc_id == "xxd.1.md"


def test_hiqa_search_says_a_keyword_was_not_taken_as_a_name(pages, settings, capsys):
    from hiqa.cli.main import main
    from hiqa.index import store

    store.close_all()
    argv = ["--data-dir", str(settings.data_dir), "search",
            "wait for some event on a file descriptor", "-c", "man", "-k", "3"]
    assert main(argv) == 0
    err = capsys.readouterr().err
    assert "note: 'wait' is also an ordinary word here: not taken as a name" in err
    assert "the question names" not in err
    assert main([*argv[:3], "wait(2): some event on a file descriptor", *argv[4:]]) == 0
    err = capsys.readouterr().err
    assert "note: the question names 'wait.2.md'" in err and "ordinary word" not in err


TOOLS = {
    "ls.1.md": ("ls(1)", "ls - list directory contents",
                ("List information about the FILEs. Sort entries alphabetically; --color "
                 "colorizes the output.")),
    "dircolors.1.md": ("dircolors(1)", "dircolors - color setup for ls",
                       ("Output commands to set the LS_COLORS environment variable, the "
                        "colors that ls uses for each kind of file.")),
    **{f"{tool}.1.md": (f"{tool}(1)", f"{tool} - {what}", f"{tool} {body}.") for tool, what, body in [
        ("cat", "concatenate files", "reads each file in turn and writes it out"),
        ("cp", "copy files", "copies a source file to a destination"),
        ("mv", "move files", "renames a source file to a destination"),
        ("rm", "remove files", "unlinks each named file"),
        ("head", "output the first part of files", "prints the first ten lines"),
        ("tail", "output the last part of files", "prints the last ten lines"),
        ("sort", "sort lines of text", "orders the lines of its input"),
        ("uniq", "omit repeated lines", "filters adjacent matching lines"),
        ("wc", "count lines and words", "prints newline, word and byte counts"),
        ("tee", "read input and write to files", "copies its input to each file"),
        ("touch", "change file timestamps", "updates the access and modification times"),
    ]},
}


@pytest.fixture
def tools(settings, tmp_path):
    return man_collection(settings, tmp_path / "tools", TOOLS)


def test_a_page_that_uses_a_name_told_by_usage_alone_keeps_its_place_before_the_named_page(tools):
    # `ls`: a plain word one other page uses, a name by the collection's usage alone; the
    # question is about dircolors, whose own text says ls and which Eq. 2 ranks first
    result, hits = tools.search_result("color setup for ls", k=3)
    assert result.named_document == "ls.1.md"
    assert hits[0].segment.doc_id == "dircolors.1.md"
    assert "ls.1.md" in {h.segment.doc_id for h in hits}  # the named page right after its own
    # named by the question's form, the page goes first whatever else ranks higher
    result, hits = tools.search_result("ls(1): color setup", k=3)
    assert hits[0].segment.doc_id == "ls.1.md"
