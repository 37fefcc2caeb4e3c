"""The README's benchmark commands run as written (issue #16).

Each ``python bench/…`` command quoted in README.md or in docs/benchmarks.md (the full benchmark
write-ups the README's headline results link to) runs with ``--quick`` appended (every bench has
it: the smallest run that goes through every stage), and the development-benchmark block (in
whichever of the two holds it) runs line by line with ``--docs 1``.  A renamed flag, a moved
script or a bench that no longer starts then fails here instead of in a reader's terminal.  The
numbers printed are not checked: at this size they mean nothing.

Scratch files go to a temporary ``TMPDIR`` shared by the module, so ``bench_app`` reuses the
corpus ``bench_retrieval`` built, as it does on a real machine.
"""
from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
BENCHMARKS = ROOT / "docs" / "benchmarks.md"
DOCUMENTS = (README, BENCHMARKS)
"""Where benchmark commands are quoted: the README's headline results and the write-ups."""
SHARED = ROOT.parent / "shared"
RUN_TIMEOUT_S = 240
BENCH_COMMAND = re.compile(r"python3? bench/[\w./-]+\.py[^`\n]*")


def readme_bench_commands(text: str) -> list[list[str]]:
    """Every ``python bench/X.py …`` in ``text``, once each, as argv.

    ``[--flag]`` (an option the README marks optional) is kept, so the optional flag is run too;
    other bracketed text is a placeholder and is dropped.
    """
    out: list[list[str]] = []
    for match in BENCH_COMMAND.finditer(text):
        line = match.group(0).split("#")[0]
        line = re.sub(r"\[(--[^\]]*)\]", r"\1", line)
        line = re.sub(r"\[[^\]]*\]", "", line)
        argv = shlex.split(line)
        if argv not in out:
            out.append(argv)
    return out


def documented_text() -> str:
    """README.md and docs/benchmarks.md, joined in that order."""
    return "\n\n".join(path.read_text(encoding="utf-8") for path in DOCUMENTS)


def readme_dev_benchmark_block(text: str) -> list[list[str]]:
    """The shell block under "Development benchmark", one argv per command."""
    assert "### Development benchmark" in text, "no 'Development benchmark' section"
    section = text.split("### Development benchmark", 1)[1]
    block = re.search(r"```(?:bash|sh)\n(.*?)```", section, re.DOTALL)
    assert block, "no ```bash block under 'Development benchmark'"
    joined = block.group(1).replace("\\\n", " ")
    return [shlex.split(line) for line in joined.splitlines() if line.strip()]


def smallest(argv: list[str]) -> list[str]:
    """``argv`` at its smallest size: ``--docs 1`` for the dev corpus."""
    out = list(argv)
    for i, arg in enumerate(out[:-1]):
        if arg == "--docs":
            out[i + 1] = "1"
    return out


def executable(argv: list[str]) -> list[str]:
    """Run ``python``/``python3``/``hiqa`` with this interpreter, so the tested checkout runs."""
    program, *rest = argv
    if program in ("python", "python3"):
        return [sys.executable, *rest]
    if program == "hiqa":
        return [sys.executable, "-m", "hiqa.cli.main", *rest]
    raise AssertionError(f"README command starts with {program!r}: teach this test to run it")


def run(argv: list[str], cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run(executable(argv), cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=RUN_TIMEOUT_S, check=False)
    assert proc.returncode == 0, (
        f"`{shlex.join(argv)}` exited {proc.returncode}:\n{proc.stdout[-2000:]}\n"
        f"{proc.stderr[-3000:]}")
    return proc


@pytest.fixture(scope="module")
def scratch_env(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    tmp = tmp_path_factory.mktemp("readme")
    env = {k: v for k, v in os.environ.items() if not k.startswith("HIQA_")}
    env["TMPDIR"] = str(tmp)
    env["HIQA_DATA_DIR"] = str(tmp / "data")
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    return env


def needs_dev_corpus_builder() -> None:
    if not (SHARED / "bench" / "make_dev_corpus.py").is_file():
        pytest.skip(f"the shared benchmark scripts are not beside the repository ({SHARED})")
    if not any(Path("/usr/share/man/man1").glob("*")):
        pytest.skip("no man pages installed: the dev corpus is built from them")


COMMANDS = readme_bench_commands(documented_text())


def test_readme_quotes_each_bench_script_that_exists() -> None:
    scripts = [argv[1] for argv in COMMANDS]
    assert {"bench/bench_format.py", "bench/bench_retrieval.py", "bench/bench_embed.py",
            "bench/bench_app.py"} <= set(scripts)
    assert [s for s in scripts if not (ROOT / s).is_file()] == []


def test_parsing_keeps_optional_flags_and_drops_placeholders() -> None:
    text = ("### Embedders — `python bench/bench_embed.py [--quality]`\n"
            "    python bench/bench_format.py [PDF ...] --runs 3   # note\n")
    assert readme_bench_commands(text) == [
        ["python", "bench/bench_embed.py", "--quality"],
        ["python", "bench/bench_format.py", "--runs", "3"],
    ]


@pytest.mark.parametrize("argv", COMMANDS, ids=[shlex.join(argv[1:]) for argv in COMMANDS])
def test_readme_bench_command_runs(argv: list[str], scratch_env: dict[str, str]) -> None:
    script = argv[1]
    if script != "bench/bench_format.py":
        needs_dev_corpus_builder()
    if script == "bench/bench_app.py":
        pytest.importorskip("playwright.sync_api")
        if not Path("/usr/bin/chromium").exists():
            pytest.skip("bench_app drives Debian's chromium")
    proc = run([*in_scratch(argv, Path(scratch_env["TMPDIR"])), "--quick"], ROOT, scratch_env)
    assert "|" in proc.stdout or "---" in proc.stdout, f"no table printed:\n{proc.stdout}"


def in_scratch(argv: list[str], scratch: Path) -> list[str]:
    """``argv`` with a data dir the documents name by a placeholder (``--data-dir NEW``) put in
    the scratch folder: commands run from the repository, and a relative one was written
    into it (a run committed by mistake)."""
    out = list(argv)
    for i, arg in enumerate(out[:-1]):
        if arg == "--data-dir":
            out[i + 1] = str(scratch / "data-dir" / out[i + 1])
    return out


def test_readme_dev_benchmark_block_runs(tmp_path: Path, scratch_env: dict[str, str]) -> None:
    """The block as written, from a folder with ``../shared`` beside it, as a checkout has."""
    needs_dev_corpus_builder()
    commands = readme_dev_benchmark_block(documented_text())
    assert any(argv[:2] == ["python3", "../shared/bench/make_dev_corpus.py"] for argv in commands)
    (tmp_path / "shared").symlink_to(SHARED.resolve(), target_is_directory=True)
    work = tmp_path / "checkout"
    work.mkdir()
    for argv in commands:
        run(smallest(argv), work, scratch_env)
        if "--out" in argv:
            out = work / argv[argv.index("--out") + 1]
            assert out.is_file() and out.read_text(encoding="utf-8").startswith("{")
