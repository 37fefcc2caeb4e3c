"""End to end in a real browser: ``streamlit run app.py`` + headless Chromium (Playwright).

Starts the app on a free localhost port with an empty data dir, waits for the demo collection to
be built, asks a demo question and checks that the extractive answer contains its gold phrase,
asks another, moves the α slider and checks the ranking changes, opens every page by its URL
(``/chat`` must be Chat, both embedding plots must render), clicks a heading-only parent in the
Segments tree, and runs the evaluation on the demo to check that β changes the α/β heat map
(the collection's lexicon is used).  Screenshots go to ``test-artifacts/``; with
``HIQA_UPDATE_SCREENSHOTS=1`` they are also copied to ``docs/screenshots/`` for the README.

To stay lean the demo is built from 4 of its 40 pages (``HIQA_DEMO_DIR`` points at a copy);
``HIQA_E2E_FULL_DEMO=1`` uses the whole demo.  Skipped when Chromium or Playwright is missing.
"""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest
from index_fixtures import unseen_documents
from llm_server import free_port, stop_process

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM = Path("/usr/bin/chromium")
ARTIFACTS = ROOT / "test-artifacts"
SCREENSHOTS = ROOT / "docs" / "screenshots"
LAUNCH_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
               "--disable-background-networking", "--disable-component-update", "--disable-sync"]
DEMO_PAGES = ["sql-dropindex.html", "sql-dropmaterializedview.html",
              "sql-creatematerializedview.html", "sql-dropdatabase.html"]  # 28 segments
QUESTION = "What does CONCURRENTLY do when dropping an index?"
AMBIGUOUS = "What happens if the object does not exist?"  # every DROP page answers it
GOLD_ID = "q10"  # "Can DROP DATABASE be executed inside a transaction block?"
BUILD_TIMEOUT_MS = 300_000
DATA_DIRS: dict[str, Path] = {}
"""A running app's URL -> its data dir (what a test checks on disk after working in the page)."""

if os.environ.get("CI") and not CHROMIUM.exists():
    raise RuntimeError(f"CI must install Debian's chromium ({CHROMIUM}); see scripts/test.sh")
playwright_api = pytest.importorskip("playwright.sync_api")
pytestmark = pytest.mark.skipif(not CHROMIUM.exists(), reason="needs Debian's chromium")


def demo_questions() -> list[dict]:
    path = ROOT / "data" / "demo" / "questions.jsonl"
    return [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines() if x.strip()]


def wait_healthy(url: str, proc: subprocess.Popen, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"streamlit exited with {proc.returncode}")
        try:
            with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as r:
                if r.status == 200:
                    return
        except OSError:
            time.sleep(0.3)
    raise TimeoutError(f"streamlit did not answer at {url} within {timeout} s")


def lean_demo(demo: Path) -> Path:
    """The demo's four ``DEMO_PAGES`` with their shipped vectors and questions, in ``demo``."""
    (demo / "docs").mkdir(parents=True)
    for name in DEMO_PAGES:
        shutil.copy(ROOT / "data" / "demo" / "docs" / name, demo / "docs" / name)
    for extra in ("lexicon.csv", "embeddings.sqlite3"):
        if (ROOT / "data" / "demo" / extra).exists():
            shutil.copy(ROOT / "data" / "demo" / extra, demo / extra)
    # the questions about these four pages only (the evaluation needs every gold document)
    (demo / "questions.jsonl").write_text("".join(
        json.dumps(q) + "\n" for q in demo_questions()
        if {g["doc"] for g in q["gold"]} <= set(DEMO_PAGES)), encoding="utf-8")
    return demo


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("e2e")
    env = {k: v for k, v in os.environ.items() if not k.startswith("HIQA_")}
    env["HIQA_DATA_DIR"] = str(tmp / "data")
    if not os.environ.get("HIQA_E2E_FULL_DEMO"):
        env["HIQA_DEMO_DIR"] = str(lean_demo(tmp / "demo"))
    port = free_port()
    log = (tmp / "streamlit.log").open("w")
    proc = subprocess.Popen(
        [sys.executable, "-m", "streamlit", "run", "app.py", "--server.port", str(port),
         "--server.address", "127.0.0.1", "--server.headless", "true",
         "--browser.gatherUsageStats", "false"],  # no watcher: .streamlit/config.toml
        cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    DATA_DIRS[url] = tmp / "data"
    try:
        wait_healthy(url, proc)
        yield url
    finally:
        stop_process(proc)
        log.close()
        ARTIFACTS.mkdir(exist_ok=True)
        shutil.copy(tmp / "streamlit.log", ARTIFACTS / "streamlit.log")


@pytest.fixture(scope="module")
def page(server):
    with playwright_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=LAUNCH_ARGS)
        context = browser.new_context(viewport={"width": 1440, "height": 1000})
        pg = context.new_page()
        pg.set_default_timeout(60_000)
        yield pg
        context.close()
        browser.close()


def shot(page, name: str, readme: bool = True) -> None:
    ARTIFACTS.mkdir(exist_ok=True)
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.mouse.move(700, 5)  # no tooltip from the last click over the screenshot
    page.wait_for_timeout(300)
    path = ARTIFACTS / f"{name}.png"
    page.screenshot(path=str(path), full_page=True)
    if readme and os.environ.get("HIQA_UPDATE_SCREENSHOTS"):  # refresh the README's copies
        shutil.copy(path, SCREENSHOTS / path.name)


def settle(page) -> None:
    """Wait until Streamlit has finished the current run (the status widget disappears)."""
    page.wait_for_timeout(200)
    page.wait_for_function(
        "() => !document.querySelector('[data-testid=\"stStatusWidget\"]')", timeout=120_000)


def table_rows(page) -> list[str]:
    return page.locator('[data-testid="stTable"] tbody tr').all_inner_texts()


def table_order(page) -> list[str]:
    """Document + section of each ranked row, best first (scores left out)."""
    return ["|".join(row.split("\t")[2:4]) for row in table_rows(page)]


def goto(page, title: str) -> None:
    page.locator('[data-testid="stSidebar"] a', has_text=title).first.click()
    page.get_by_role("heading", name=title).first.wait_for()
    settle(page)


def ask(page, question: str) -> str:
    """Ask in Chat; returns the newest answer's text once its sources are shown."""
    before = page.locator('[data-testid="stChatMessage"]').count()
    chat = page.locator('[data-testid="stChatInputTextArea"]')
    chat.fill(question)
    chat.press("Enter")
    page.wait_for_function(
        f"() => document.querySelectorAll('[data-testid=\"stChatMessage\"]').length >= {before + 2}"
        " && [...document.querySelectorAll('[data-testid=\"stChatMessage\"]')].pop()"
        ".innerText.includes('Sources')", timeout=180_000)
    page.locator('[data-testid="stTable"]').wait_for()
    settle(page)
    return page.locator('[data-testid="stChatMessage"]').last.inner_text()


def upload(page, server: str, path: Path) -> None:
    """Open the app (once the demo is built), go to Ingest and choose ``path`` in the uploader."""
    page.goto(server)
    page.locator('[data-testid="stChatInputTextArea"]').wait_for(timeout=BUILD_TIMEOUT_MS)
    settle(page)
    goto(page, "Ingest")
    page.locator('[data-testid="stFileUploaderDropzoneInput"]').first.set_input_files(str(path))
    page.get_by_text(path.name).first.wait_for()


def loose(text: str) -> str:
    return " ".join(re.sub(r"\[\d+\]", " ", text).casefold().split())


def address(url: str) -> tuple[str, dict[str, list[str]]]:
    """A page's path and its query (the app keeps the chosen collection in ``?collection=``)."""
    from urllib.parse import parse_qs, urlparse

    parts = urlparse(url)
    return parts.path.rstrip("/"), parse_qs(parts.query)


def test_demo_chat_rerank_and_pages(server, page):
    page.goto(server)
    chat = page.locator('[data-testid="stChatInputTextArea"]')
    chat.wait_for(timeout=BUILD_TIMEOUT_MS)  # the demo has been built (first start)
    settle(page)
    path, query = address(page.url)
    assert path.endswith("/chat"), "the root URL should open Chat at /chat"
    assert query.get("collection") == ["demo"], "the chosen collection is kept in the URL"
    page.get_by_text("Collection demo").first.wait_for()  # the Chat caption (the sidebar has one too)

    gold = next(q for q in demo_questions() if q["id"] == GOLD_ID)
    answer = ask(page, gold["question"])
    assert "extractive" in answer
    assert loose(gold["answer_phrase"]) in loose(answer), answer

    ask(page, QUESTION)
    links = page.locator('[data-testid="stChatMessage"] a[href^="#source-1-"]')
    assert links.count() >= 1, "the answer shows no citation links"
    assert re.fullmatch(r"\[\d+\]", links.first.inner_text().strip())
    assert "```" not in page.locator('[data-testid="stChatMessage"]').last.inner_text()
    before = table_order(page)
    assert len(before) == 5
    table = page.locator('[data-testid="stTable"]').first
    assert table.evaluate("t => t.scrollWidth <= t.parentElement.clientWidth + 1"), \
        "the evidence table needs a horizontal scrollbar at 1,440 px"
    page.locator('[data-testid="stChatMessage"]').nth(-2).scroll_into_view_if_needed()
    shot(page, "chat")  # the question, its cited answer and the top of the evidence

    slider = page.locator('[data-testid="stSlider"]', has_text="α").locator('input[type="range"]')
    slider.focus()
    orders = []
    for key, shown in (("Home", "α = 0.00"), ("End", "α = 1.00")):  # BM25 only, dense only
        slider.press(key)  # re-fused from the cached candidates, no new retrieval
        page.get_by_text(shown).first.wait_for()
        settle(page)
        orders.append(table_order(page))
    assert any(order != before for order in orders), "moving α did not change the ranking"
    shot(page, "chat-reranked")

    # A question that names no page, which several pages answer: the pages of its evidence
    # are offered, and one click asks it again within one of them.
    ask(page, AMBIGUOUS)
    page.get_by_text("names none of the documents").first.wait_for()
    offers = page.locator('[data-testid="stButton"] button', has_text="Ask within")
    assert offers.count() >= 2
    offers.first.scroll_into_view_if_needed()
    shot(page, "chat-ask-within", readme=False)  # test artifact only
    before = page.locator('[data-testid="stChatMessage"]').count()
    offers.first.click()
    page.wait_for_function(
        f"() => document.querySelectorAll('[data-testid=\"stChatMessage\"]').length >= {before + 2}"
        " && [...document.querySelectorAll('[data-testid=\"stChatMessage\"]')].pop()"
        ".innerText.includes('Sources')", timeout=180_000)
    settle(page)
    asked = page.locator('[data-testid="stChatMessage"]').nth(-2).inner_text()
    assert asked.strip().endswith(AMBIGUOUS), asked  # after the avatar's icon name
    assert len({row.split("\t")[2] for row in table_rows(page)}) == 1, table_rows(page)
    assert page.get_by_text("names none of the documents").count() == 0

    goto(page, "Embedding space")
    path, query = address(page.url)
    assert path.endswith("/embedding") and query.get("collection") == ["demo"]
    page.locator(".js-plotly-plot").nth(1).wait_for(timeout=BUILD_TIMEOUT_MS)
    settle(page)
    assert page.locator(".js-plotly-plot").count() == 2
    assert page.locator(".js-plotly-plot .scatterlayer, .js-plotly-plot canvas").count() >= 2
    page.get_by_text("Silhouette by document").first.wait_for()
    shot(page, "embedding")

    goto(page, "Segments")
    page.get_by_text("Cascaded path").first.wait_for()
    parent = page.locator('[data-testid="stButton"] button', has_text="Parameters").first
    assert "folder" in parent.inner_text(), "'Parameters' (only terms below it) is not a parent"
    parent.click()  # selects its first term
    page.locator('[data-testid="stMarkdownContainer"]', has_text="Cascaded path").filter(
        has_text="Parameters >").first.wait_for(timeout=30_000)
    settle(page)
    shot(page, "segments")

    goto(page, "Ingest")
    shot(page, "ingest")

    goto(page, "Evaluate & tune")
    page.get_by_text("Degradation curve").first.click()  # off: the heat map is what is checked
    page.get_by_role("button", name="Run evaluation").click()
    page.get_by_text("α/β sensitivity").first.wait_for(timeout=BUILD_TIMEOUT_MS)
    settle(page)
    z = page.evaluate("""() => [...document.querySelectorAll('.js-plotly-plot')]
        .map(p => p.data && p.data[0]).find(t => t && t.type === 'heatmap').z""")
    # one row per β, one column per α (hiqa.eval.runner's grid), and the surface is drawn from
    # measured values, not one constant.  Whether β moves the metrics is a property of the
    # corpus: on these four pages and four questions it does not (tests/test_evaluate.py
    # checks that it does on the whole demo with its lexicon).
    assert len(z) == 7 and all(len(row) == 11 for row in z), z
    assert len({v for row in z for v in row}) > 1, "the α/β heat map is one constant"
    page.locator(".js-plotly-plot").last.scroll_into_view_if_needed()
    shot(page, "evaluate")
    assert "Traceback" not in page.content()

    page.goto(f"{server}/chat")  # every page has its own address
    page.get_by_role("heading", name="Chat").first.wait_for()
    settle(page)
    assert "Page not found" not in page.content()


EVIL_MD = """# Evil <a href="https://evil.example/title" id="inj-title">Login here</a> manual

The evil widget login manual: read it before the login page setup, https://evil.example/intro.

## <img src="https://evil.example/x.png" onerror="window.__pwned=1" id="inj-img"> Setup <b id="inj-b">bold</b> [click](javascript:window.__pwned=2)

Visit https://evil.example/bare or www.evil.example and [this page](https://evil.example/md) or
[run me](javascript:window.__pwned=3) or <a href="javascript:window.__pwned=4" id="inj-a">this</a>.
Write to admin@evil.example. ![logo](https://evil.example/logo.png) <script>window.__pwned=5</script>
The evil widget manual explains the setup of the login page.

## Login here: https://evil.example/heading <i id="inj-i">now</i>

The login page asks for a password; see <https://evil.example/auto> for the evil widget.
"""
EVIL_QUESTION = "evil widget login page password setup"
INJECTED = """() => {
  const bad = [];
  for (const el of document.querySelectorAll('*')) {
    if (el.id && el.id.startsWith('inj-')) bad.push(`element #${el.id}`);
    for (const name of el.getAttributeNames()) {
      const value = el.getAttribute(name) || '';
      if (/^on/i.test(name) && value.includes('__pwned')) bad.push(`${el.tagName} ${name}`);
      if (/(^|:)(href|src)$/i.test(name)
          && (value.includes('evil.example') || /^\\s*javascript:/i.test(value))) {
        bad.push(`${el.tagName} ${name}=${value}`);
      }
    }
    if (el.tagName === 'SCRIPT' && el.textContent.includes('__pwned')) bad.push('script');
  }
  if (window.__pwned) bad.push(`script ran: ${window.__pwned}`);
  return bad;
}"""


PLOT_TEXTS = ("() => [...document.querySelectorAll('.js-plotly-plot')].flatMap(gd => "
              "(gd.data || []).flatMap(t => [t.name || '', ...[].concat(t.text || [])]))")
SECTION_TRACES = ("() => [...document.querySelectorAll('.js-plotly-plot')].some(gd => "
                  "(gd.data || []).some(t => (t.name || '').toLowerCase().includes('login here')))")


def assert_nothing_injected(page, where: str) -> None:
    settle(page)
    found = page.evaluate(INJECTED)
    assert not found, f"{where}: document text became markup: {found}"


def test_markup_in_documents_stays_text_on_every_page(server, page, tmp_path):
    """A document whose headings and text carry HTML, Markdown links, bare URLs and
    ``javascript:`` URLs is ingested through the Ingest page; no page may turn any of it into an
    element (link, image, script, bold) in the DOM, including Plotly's labels."""
    evil = tmp_path / "evil.md"
    evil.write_text(EVIL_MD, encoding="utf-8")
    upload(page, server, evil)
    page.get_by_role("button", name="Ingest").click()
    page.get_by_text(re.compile(r"^Ingest into [^:]+: 1 added")).first.wait_for(timeout=BUILD_TIMEOUT_MS)
    assert_nothing_injected(page, "Ingest")

    goto(page, "Chat")
    chat = page.locator('[data-testid="stChatInputTextArea"]')
    chat.fill(EVIL_QUESTION)
    chat.press("Enter")
    page.get_by_text("Sources").first.wait_for(timeout=120_000)
    page.locator('[data-testid="stTable"]').wait_for()
    page.locator(".js-plotly-plot").first.wait_for()
    settle(page)
    assert any("evil" in row for row in table_rows(page)), "the evil document was not retrieved"
    chart = page.locator(".js-plotly-plot").first.evaluate("e => e.textContent")
    assert '<a href="https://evil.example/title"' in chart  # the heading is shown, as text
    for expander in page.locator('[data-testid="stExpander"] summary').all():
        expander.click()  # open every source block
    assert_nothing_injected(page, "Chat")
    shot(page, "security-chat", readme=False)  # test artifact only

    ask(page, "widget login page password setup")  # names no document: its titles are offered
    offer = page.locator('[data-testid="stButton"] button', has_text="Ask within").first
    shown = offer.inner_text().replace("\u2060", "")  # escape_markdown's word joiner
    assert '<a href="https://evil.example/title"' in shown  # the title, as text
    assert_nothing_injected(page, "Chat's Ask within buttons")

    goto(page, "Segments")
    page.get_by_label("Path contains").fill("Login here")
    page.get_by_role("button", name="Apply").click()
    page.get_by_text("Cascaded path").first.wait_for()
    settle(page)
    assert "evil.example/" in page.inner_text("body")  # the text is on the page, as text
    assert_nothing_injected(page, "Segments")

    goto(page, "Embedding space")
    page.locator(".js-plotly-plot").nth(1).wait_for(timeout=BUILD_TIMEOUT_MS)
    page.get_by_text("section name").first.click()  # headings become the trace names
    page.wait_for_function(SECTION_TRACES, timeout=120_000)
    labels = page.evaluate(PLOT_TEXTS)  # legend names and hover texts handed to Plotly
    assert any("&lt;a href=" in label for label in labels), "the headings are not in the plots"
    assert not any("<a " in label or "<img" in label for label in labels)
    assert_nothing_injected(page, "Embedding space")

    goto(page, "Evaluate & tune")
    assert_nothing_injected(page, "Evaluate & tune")
    assert "Traceback" not in page.content()


RECORD_BARS = """() => {
  window.__bars = [];
  const record = () => {
    for (const bar of document.querySelectorAll('[data-testid="stProgress"]')) {
      const label = bar.innerText.trim();
      const value = bar.querySelector('[role="progressbar"]')?.getAttribute('aria-valuenow');
      const last = window.__bars[window.__bars.length - 1];
      if (!last || last[0] !== label || last[1] !== value) window.__bars.push([label, value]);
    }
  };
  new MutationObserver(record).observe(document.body,
    {subtree: true, childList: true, characterData: true, attributes: true});
}"""  # every state of the page's progress bars, in the order the browser drew them


def test_ingest_before_finishing_shows_moving_progress(server, page, tmp_path):
    """Ingest one new 30-section manual with "Dense vectors: Before finishing": while the model
    embeds, the browser shows one bar with segments embedded / total and an ETA, the share
    only grows, and the run ends with every segment embedded and the document added."""
    name, text = next(iter(unseen_documents("e2e-progress", sections=(30,)).items()))
    doc = tmp_path / name
    doc.write_text(text, encoding="utf-8")
    upload(page, server, doc)
    page.get_by_text("Before finishing").first.click()
    page.evaluate(RECORD_BARS)
    page.get_by_role("button", name="Ingest").click()
    done = page.get_by_text(re.compile(r"^Ingest into [^:]+: 1 added"))
    done.first.wait_for(timeout=BUILD_TIMEOUT_MS)
    seen = [(t, int(v or 0)) for t, v in page.evaluate("() => window.__bars")]
    embedding = [(t, v) for t, v in seen if re.search(r"segments \d+/~?\d+ embedded", t)]
    assert any(re.search(r"ETA \d+m\d\ds", t) for t, _ in embedding), seen
    midway = [v for t, v in embedding if 0 < v < 100]
    assert midway, f"no update while embedding: {seen}"
    values = [v for _, v in seen]
    assert values == sorted(values), f"the bar went back: {values}"
    # the last states drawn (the "Done" at 100 % is replaced by the page's rerun with the
    # result, so the browser need not draw it): every segment embedded, the bar near its end
    assert "segments 30/30 embedded" in embedding[-1][0], embedding[-1]
    assert values[-1] >= 95, seen[-3:]
    # issue #34, item 7: the bar is never behind the counter its text shows
    for text, value in embedding:
        done, total = map(int, re.search(r"segments (\d+)/~?(\d+)", text).groups())
        assert value >= 100 * done / total - 10, (text, value)
    shot(page, "ingest-progress", readme=False)


def choose_in_sidebar(page, collection: str) -> None:
    """Pick ``collection`` in the sidebar's Collection box, as a user does."""
    box = page.locator('[data-testid="stSidebar"] [data-testid="stSelectbox"]').first
    box.click()
    page.get_by_role("option", name=collection, exact=True).click()
    settle(page)


def test_ingest_goes_into_the_collection_the_sidebar_shows(server, page, tmp_path):
    """Issue #34, item 1: a file went silently into another collection than the sidebar's.  The
    Ingest page now ingests into the sidebar's collection, names it on the button, and names it
    in the message; the documents table below is that collection's."""
    report = tmp_path / "report-2023.md"
    report.write_text("# Annual report 2023\n\n## Revenue\n\nRevenue was twelve units.\n")
    upload(page, server, report)
    page.get_by_text("A new collection").first.click()
    settle(page)
    name = page.get_by_label("New collection name")
    name.fill("reports-2024")
    name.press("Enter")
    settle(page)
    page.get_by_role("button", name="Ingest into reports-2024").click()
    page.get_by_text(re.compile(r"^Ingest into reports-2024: 1 added")).first.wait_for(
        timeout=BUILD_TIMEOUT_MS)
    settle(page)
    choose_in_sidebar(page, "demo")  # the analyst goes back to the demo, then adds a note
    note = tmp_path / "index-notes.md"
    note.write_text("# Index notes\n\n## Rebuilding\n\nRebuild an index with REINDEX.\n")
    page.locator('[data-testid="stFileUploaderDropzoneInput"]').first.set_input_files(str(note))
    page.get_by_text(note.name).first.wait_for()
    page.get_by_role("button", name="Ingest into demo").click()
    page.get_by_text(re.compile(r"^Ingest into demo: 1 added")).first.wait_for(
        timeout=BUILD_TIMEOUT_MS)
    settle(page)
    assert "**demo**" not in page.content()  # Markdown rendered, not shown raw
    manage = page.locator('[data-testid="stMarkdown"]', has_text="strategy").first.inner_text()
    assert manage.startswith("demo")
    registries = DATA_DIRS[server] / "collections"
    demo = json.loads((registries / "demo" / "meta.json").read_text(encoding="utf-8"))
    reports = json.loads((registries / "reports-2024" / "meta.json").read_text(encoding="utf-8"))
    assert "index-notes.md" in demo["documents"] and list(reports["documents"]) == [report.name]


def fresh_chat(page, server: str) -> None:
    """A new browser session on Chat (the chat history is per session)."""
    page.goto(server)
    page.locator('[data-testid="stChatInputTextArea"]').wait_for(timeout=BUILD_TIMEOUT_MS)
    settle(page)


UNNAMED_TERM = ("How can I drop an index without locking out concurrent selects, inserts, "
                "updates, and deletes?")


def test_an_extractive_answer_names_the_term_it_quotes(server, page):
    """Issue #34, item 3: the answer quoted an option's description and left out the option
    (the term line of its item), so it did not say what to write."""
    fresh_chat(page, server)
    answer = ask(page, UNNAMED_TERM)
    assert "CONCURRENTLY: Drop the index without locking out concurrent selects" in answer, answer


def test_the_evidence_table_names_documents_by_title(server, page):
    """Issue #34, item 8: file ids where titles belong; rank, then how it moved, then title,
    section and score parts."""
    fresh_chat(page, server)
    ask(page, QUESTION)
    head = page.locator('[data-testid="stTable"] thead th').all_inner_texts()
    assert [h.strip() for h in head][:4] == ["rank", "change", "document", "section"], head
    documents = [row.split("\t")[2].strip() for row in table_rows(page)]
    assert documents[0] == "DROP INDEX" and not any(d.endswith(".html") for d in documents)


def slider_input(page, label: str):
    return page.locator('[data-testid="stSlider"]', has_text=label).locator('input[type="range"]')


def test_keyboard_moves_of_a_slider_count_what_moved(server, page):
    """Issue #34, item 9: after keyboard moves of α the page said "0 moved" though the ranking
    had changed (each key press was compared with the one before)."""
    fresh_chat(page, server)
    ask(page, AMBIGUOUS)
    answered = table_order(page)
    alpha = slider_input(page, "α")
    alpha.focus()
    for _ in range(40):  # one 0.05 step a press, from wherever the preset put α, down to 0
        if page.get_by_text("α = 0.00,").count():
            break
        alpha.press("ArrowLeft")
        settle(page)
    page.get_by_text("α = 0.00,").first.wait_for()
    settle(page)
    after = table_order(page)
    assert after != answered, "α from 0.7 to 0 did not change this question's ranking"
    changes = [row.split("\t")[1].strip() for row in table_rows(page)]
    moved = sum(1 for c in changes if c != "=")
    assert moved > 0 and any(c[0] in "↑↓" or c == "new" for c in changes), changes
    page.get_by_text(f"{moved} moved since the answer").first.wait_for()


def test_a_stale_answer_is_marked_and_answered_again(server, page):
    """Issue #34, item 2: the answer stayed the one made from the first ranking while the
    evidence below changed.  Now it is marked, and one click answers from the evidence shown;
    the earlier answer stays for comparison."""
    fresh_chat(page, server)
    first = ask(page, AMBIGUOUS)
    top_k = slider_input(page, "Top-k")
    top_k.focus()
    top_k.press("ArrowLeft")  # 5 -> 4: the evidence set changes
    settle(page)
    page.get_by_text("written from other evidence than the table shows now").first.wait_for()
    before = page.locator('[data-testid="stChatMessage"]').count()
    page.get_by_role("button", name="Answer again from this evidence").click()
    page.wait_for_function(
        f"() => document.querySelectorAll('[data-testid=\"stChatMessage\"]').length >= {before + 2}"
        " && [...document.querySelectorAll('[data-testid=\"stChatMessage\"]')].pop()"
        ".innerText.includes('Sources')", timeout=180_000)
    settle(page)
    messages = page.locator('[data-testid="stChatMessage"]')
    # the earlier answer, unchanged (its text; its source list may still be drawing when
    # ask() returned on a busy machine, so it is not compared)
    assert messages.nth(1).inner_text().split("Sources")[0] == first.split("Sources")[0]
    assert "Answered again from the evidence re-ranked" in messages.last.inner_text()
    assert page.get_by_text("written from other evidence").count() == 0


def ingest_into_the_sidebars_collection(page, server: str, path: Path) -> None:
    upload(page, server, path)
    page.get_by_role("button", name="Ingest into").click()
    page.get_by_text(re.compile(r"^Ingest into [^:]+: 1 added")).first.wait_for(
        timeout=BUILD_TIMEOUT_MS)


def test_a_citation_gives_the_page_number_printed_on_the_page(server, page, tmp_path):
    """Issue #34, item 4: citations gave the PDF's page index.  A chapter file whose pages are
    printed 231-233 is cited "p. 232 (PDF page 2)"."""
    from test_page_labels import manual

    pdf = manual(tmp_path / "pump-chapter.pdf", first_printed=231)
    ingest_into_the_sidebars_collection(page, server, pdf)
    fresh_chat(page, server)
    answer = ask(page, "How do I prime the pump step by step?")
    assert "p. 232 (PDF page 2)" in answer, answer


def test_every_document_on_the_embedding_map_has_its_own_colour_and_shape(server, page):
    """Issue #34, item 12: several magenta shades could not be told apart.  Each document's
    points have a colour and a marker shape of their own, the colours far apart."""
    fresh_chat(page, server)
    goto(page, "Embedding space")
    page.locator(".js-plotly-plot").nth(1).wait_for(timeout=BUILD_TIMEOUT_MS)
    settle(page)
    styles = page.evaluate("""() => [...document.querySelectorAll('.js-plotly-plot')][1].data
        .filter(t => t.showlegend !== false && t.name !== 'top-k' && t.name !== 'question')
        .map(t => [t.name, t.marker.color, t.marker.symbol])""")
    assert len(styles) >= 4, styles
    assert len({(c, s) for _, c, s in styles}) == len(styles), styles

    def rgb(c: str) -> tuple[int, ...]:
        return tuple(int(c[i:i + 2], 16) for i in (1, 3, 5))

    colours = sorted({c for _, c, _ in styles})
    assert all(sum((x - y) ** 2 for x, y in zip(rgb(a), rgb(b))) ** 0.5 > 60
               for i, a in enumerate(colours) for b in colours[i + 1:]), colours


def test_evaluate_shows_the_numbers_of_the_weights_chosen(server, page):
    """Issue #34, item 6: moving α/β on the Evaluate page changed nothing visible.  The chosen
    cell's Recall@5 / MRR / Log-Rank are shown beside the map, the cell framed and the best one
    starred, and they follow the slider."""
    fresh_chat(page, server)
    goto(page, "Evaluate & tune")
    page.get_by_text("Degradation curve").first.click()
    page.get_by_role("button", name="Run evaluation").click()
    page.get_by_text("α/β sensitivity").first.wait_for(timeout=BUILD_TIMEOUT_MS)
    settle(page)
    shown = page.get_by_text(re.compile(r"^At α = [\d.]+, β = [\d.]+$")).first
    before = shown.inner_text()
    page.locator('[data-testid="stMetricValue"]').nth(2).wait_for(timeout=60_000)
    values = page.locator('[data-testid="stMetricValue"]').all_inner_texts()
    assert len(values) == 3 and all(re.fullmatch(r"\d\.\d{3}", v) for v in values), values
    page.wait_for_function("""() => [...document.querySelectorAll('.js-plotly-plot')]
        .some(p => p.data && p.data[0] && p.data[0].type === 'heatmap')""", timeout=60_000)
    marks = page.evaluate("""() => [...document.querySelectorAll('.js-plotly-plot')]
        .map(p => p.data).find(d => d && d[0].type === 'heatmap')
        .filter(t => t.name === 'current' || t.name === 'best').map(t => [t.name, t.x[0]])""")
    assert {name for name, _ in marks} == {"current", "best"}, marks
    thumb = slider_input(page, "α").first
    thumb.focus()
    thumb.press("Home")  # α = 0: BM25 only
    settle(page)
    page.get_by_text(re.compile(r"^At α = 0, β = ")).first.wait_for()
    assert shown.inner_text() != before
    current = page.evaluate("""() => [...document.querySelectorAll('.js-plotly-plot')]
        .map(p => p.data).find(d => d && d[0].type === 'heatmap')
        .find(t => t.name === 'current').x[0]""")
    assert current == 0


def test_a_citation_opens_its_source_in_context(server, page, tmp_path):
    """Issue #34, item 5: a citation did not open its source.  Its source block is open, with
    the PDF page rendered and the passage highlighted, and one click shows the segment in the
    Segments view."""
    from test_page_labels import manual

    pdf = manual(tmp_path / "filter-chapter.pdf", first_printed=101)
    ingest_into_the_sidebars_collection(page, server, pdf)
    fresh_chat(page, server)
    ask(page, "How do I clean the filter of the pump?")
    cited = page.locator('[data-testid="stExpander"]', has_text="· cited").first
    cited.get_by_text(re.compile(r"the cited passage highlighted")).first.wait_for()
    assert cited.locator("img").count() >= 1
    chosen = address(page.url)[1].get("collection")
    cited.get_by_role("button", name="Open in Segments").click()
    page.get_by_role("heading", name="Segments").first.wait_for()
    settle(page)
    # the cited segment is the one shown: its section, and its text
    page.get_by_text("This chapter explains cleaning the filter").first.wait_for(timeout=30_000)
    # #43 item 2: the chosen collection stays, and the address names the document and segment,
    # so a reload shows the same segment
    page.wait_for_url(re.compile(r"/segments\?.*segment="), timeout=30_000)
    path, query = address(page.url)
    assert path.endswith("/segments") and query.get("collection") == chosen, page.url
    # the collection may hold another test's chapter with the same text: the cited one is named
    document = (query.get("document") or [""])[0]
    assert document.endswith("-chapter.pdf") and query.get("segment"), page.url
    page.reload()
    page.get_by_role("heading", name="Segments").first.wait_for()
    settle(page)
    page.get_by_text("This chapter explains cleaning the filter").first.wait_for(timeout=30_000)
    assert address(page.url)[1].get("segment") == query["segment"]


def test_the_cli_searches_while_the_app_is_open(server, page):
    """Issue #33: the app held the embedded store for its whole life, so `hiqa search` beside
    it waited HIQA_STORE_WAIT and failed "in use".  The app hands an idle store back
    (HIQA_STORE_IDLE, 5 s) and opens it again for its next question."""
    fresh_chat(page, server)
    first = ask(page, QUESTION)
    env = {k: v for k, v in os.environ.items() if not k.startswith("HIQA_")}
    env.update(HIQA_DATA_DIR=str(DATA_DIRS[server]), HIQA_STORE_WAIT="60")
    done = subprocess.run([sys.executable, "-m", "hiqa.cli", "search", QUESTION, "-c", "demo",
                           "-k", "3", "--json"], capture_output=True, text=True, env=env,
                          timeout=300, cwd=ROOT, check=False)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)[0]["doc"] == "sql-dropindex.html"
    second = ask(page, QUESTION)  # the app opens the store again
    assert loose(second.split("Sources")[0]) == loose(first.split("Sources")[0])


def test_the_server_log_stays_quiet_while_the_app_writes_beside_its_code(page, tmp_path):
    """Issue #34, item 10: after the Evaluate page ran, the server log filled with file-watcher
    warnings (57 KB in one visit here: watchdog watched the app folder recursively, ./data
    included, and printed every watch each time a folder under data/eval was replaced).  The
    app as a user starts it (its own .streamlit/config.toml, the default ./data beside app.py,
    no watcher flag) runs the demo's evaluation and the log holds the start lines only."""
    app = tmp_path / "app"
    app.mkdir()
    shutil.copy(ROOT / "app.py", app / "app.py")
    for folder in ("app_pages", ".streamlit"):
        shutil.copytree(ROOT / folder, app / folder,
                        ignore=shutil.ignore_patterns("__pycache__", "secrets.toml"))
    env = {k: v for k, v in os.environ.items() if not k.startswith("HIQA_")}
    env["HIQA_DEMO_DIR"] = str(lean_demo(tmp_path / "demo"))  # the data dir: ./data (default)
    port = free_port()
    log_path = tmp_path / "streamlit.log"
    with log_path.open("w") as log:
        proc = subprocess.Popen([sys.executable, "-m", "streamlit", "run", "app.py",
                                 "--server.port", str(port)],
                                cwd=app, env=env, stdout=log, stderr=subprocess.STDOUT)
        try:
            url = f"http://127.0.0.1:{port}"
            wait_healthy(url, proc)
            fresh_chat(page, url)
            goto(page, "Evaluate & tune")
            page.get_by_role("button", name="Run evaluation").click()
            page.get_by_text("α/β sensitivity").first.wait_for(timeout=BUILD_TIMEOUT_MS)
            settle(page)
            assert (app / "data" / "eval").is_dir()  # the evaluation wrote beside app.py
        finally:
            stop_process(proc)
    text = log_path.read_text(encoding="utf-8", errors="replace")
    assert "Warning" not in text and "watch" not in text.lower(), text[:3000]
    assert len(text) < 2000, text[:3000]
