"""hiqa.llm against a real OpenAI-compatible server (SmolLM2 via xllamacpp) and scripted ones."""

from __future__ import annotations

import socket
import threading
import time

import pytest
from llm_server import MODEL_ALIAS, ScriptedServer

from hiqa.errors import LLMError
from hiqa.llm import CachedLLM, LLMClient, LLMConfig

HELLO = [{"role": "user", "content": "Name three colours."}]


def client(base_url: str, **kw: object) -> LLMClient:
    settings: dict[str, object] = {"max_tokens": 16, "max_retries": 0, "timeout": 60.0}
    settings.update(kw)
    return LLMClient(LLMConfig(base_url=base_url, model=MODEL_ALIAS, **settings))  # type: ignore[arg-type]


@pytest.fixture
def env(monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    for name in ("BASE_URL", "MODEL", "API_KEY", "TIMEOUT"):
        monkeypatch.delenv(f"HIQA_LLM_{name}", raising=False)
    return monkeypatch


def test_from_env_is_none_without_base_url(env: pytest.MonkeyPatch) -> None:
    assert LLMConfig.from_env() is None
    env.setenv("HIQA_LLM_MODEL", "m")
    assert LLMConfig.from_env() is None


def test_from_env_reads_all_settings(env: pytest.MonkeyPatch) -> None:
    env.setenv("HIQA_LLM_BASE_URL", "http://localhost:8080/v1")
    env.setenv("HIQA_LLM_MODEL", "m")
    env.setenv("HIQA_LLM_API_KEY", "k")
    env.setenv("HIQA_LLM_TIMEOUT", "5")
    assert LLMConfig.from_env() == LLMConfig(
        "http://localhost:8080/v1", "m", api_key="k", timeout=5.0
    )


@pytest.mark.parametrize("timeout", ["soon", "0"])
def test_from_env_rejects_bad_timeout(env: pytest.MonkeyPatch, timeout: str) -> None:
    env.setenv("HIQA_LLM_BASE_URL", "http://x/v1")
    env.setenv("HIQA_LLM_MODEL", "m")
    env.setenv("HIQA_LLM_TIMEOUT", timeout)
    with pytest.raises(LLMError, match="HIQA_LLM_TIMEOUT"):
        LLMConfig.from_env()


def test_from_env_needs_a_model(env: pytest.MonkeyPatch) -> None:
    env.setenv("HIQA_LLM_BASE_URL", "http://x/v1")
    with pytest.raises(LLMError, match="HIQA_LLM_MODEL"):
        LLMConfig.from_env()


def test_complete_and_stream_agree(llm_server: str) -> None:
    llm = client(llm_server)
    reply = llm.chat(HELLO)
    assert reply.text.strip()
    assert reply.model == MODEL_ALIAS
    assert reply.prompt_tokens > 0 and 0 < reply.completion_tokens <= 16
    chunks = list(llm.stream(HELLO))
    assert len(chunks) >= 3
    assert "".join(chunks) == reply.text  # temperature 0: the same reply, token by token


def test_cache_second_run_makes_no_http_call(llm_server: str, dead_url: str, tmp_path) -> None:
    first = CachedLLM(client(llm_server), tmp_path)
    reply = first.chat(HELLO)
    assert not reply.cached and first.misses == 1
    # Same model and prompt, but the endpoint is down: only the cache can answer.
    again = CachedLLM(client(dead_url), tmp_path)
    cached = again.chat(HELLO)
    assert cached.cached and cached.text == reply.text
    assert (again.hits, again.misses) == (1, 0)
    with pytest.raises(LLMError):  # a different prompt is a miss and needs the endpoint
        again.chat([{"role": "user", "content": "Name three animals."}])


def test_cache_key_includes_the_model(tmp_path) -> None:
    with ScriptedServer(lambda m: "first") as one:
        CachedLLM(client(one.base_url), tmp_path).complete(HELLO)
    with ScriptedServer(lambda m: "second") as two:
        other = LLMClient(LLMConfig(two.base_url, "other-model", max_retries=0))
        assert CachedLLM(other, tmp_path).complete(HELLO) == "second"
        assert len(two.requests) == 1


def test_timeout_on_real_server(llm_server: str) -> None:
    llm = client(llm_server, timeout=0.3, max_tokens=400)
    story = [{"role": "user", "content": "Write a long story about a dragon and a knight."}]
    started = time.monotonic()
    with pytest.raises(LLMError, match=r"did not answer within 0\.3 s.*HIQA_LLM_TIMEOUT"):
        llm.complete(story)
    assert time.monotonic() - started < 5


def test_timeout_when_server_accepts_but_never_answers() -> None:
    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen()
        url = f"http://127.0.0.1:{silent.getsockname()[1]}/v1"
        with pytest.raises(LLMError, match="did not answer within"):
            client(url, timeout=0.5).complete(HELLO)
        with pytest.raises(LLMError, match="did not answer within"):
            list(client(url, timeout=0.5).stream(HELLO))


def test_server_down_gives_clear_error(dead_url: str) -> None:
    with pytest.raises(LLMError) as err:
        client(dead_url).complete(HELLO)
    message = str(err.value)
    assert dead_url in message and "not reachable" in message and "HIQA_LLM_BASE_URL" in message
    with pytest.raises(LLMError, match="not reachable"):
        list(client(dead_url).stream(HELLO))


def test_http_404_names_the_settings_to_check(llm_server: str) -> None:
    wrong = llm_server.replace("/v1", "/nothing-here")
    with pytest.raises(LLMError, match=r"HTTP 404.*HIQA_LLM_BASE_URL.*HIQA_LLM_MODEL"):
        client(wrong).complete(HELLO)


def test_http_500_and_401() -> None:
    broken_error = r"HTTP 500: scripted failure; the server failed"
    with ScriptedServer(status=500) as broken, pytest.raises(LLMError, match=broken_error):
        client(broken.base_url).complete(HELLO)
    locked_error = r"HTTP 401.*HIQA_LLM_API_KEY"
    with ScriptedServer(status=401) as locked, pytest.raises(LLMError, match=locked_error):
        client(locked.base_url).complete(HELLO)


@pytest.mark.parametrize("body", [b'{"unexpected": true}', b'{"choices": []}', b"this is not json"])
def test_malformed_reply(body: bytes) -> None:
    with ScriptedServer(raw_body=body) as odd, pytest.raises(LLMError, match=odd.base_url):
        client(odd.base_url).complete(HELLO)


def test_stream_from_scripted_server_is_exact() -> None:
    text = "Alpha beta  gamma.\nDelta [1]."
    with ScriptedServer(lambda m: text) as srv:
        chunks = list(client(srv.base_url).stream(HELLO))
    assert len(chunks) >= 4 and "".join(chunks) == text


def test_cache_is_safe_across_threads(tmp_path) -> None:
    with ScriptedServer(lambda m: m[-1]["content"].upper()) as srv:
        llm = CachedLLM(client(srv.base_url), tmp_path)
        out: list[str] = []

        def ask(i: int) -> None:
            out.append(llm.complete([{"role": "user", "content": f"q{i % 3}"}]))

        threads = [threading.Thread(target=ask, args=(i,)) for i in range(9)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    assert sorted(set(out)) == ["Q0", "Q1", "Q2"]
