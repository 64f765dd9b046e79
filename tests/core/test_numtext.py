"""core.numtext reads numbers bit for bit as float() and numpy's own text reader do."""

from __future__ import annotations

import io
import tracemalloc
from pathlib import Path

import numpy as np
import pytest

from core import numtext

DATA = Path(__file__).resolve().parents[1] / "data"
HEAD = b"HIERARCHY\nMOTION\nFrames: 1\nFrame Time: 0.1\n"


def read(body: str, columns: int) -> np.ndarray | None:
    return numtext.rows(HEAD + body.encode("latin-1"), len(HEAD), columns)


def same_bits(a: np.ndarray, b: np.ndarray) -> bool:
    return a.shape == b.shape and np.array_equal(a.view(np.int64), b.view(np.int64))


def plain_tokens(rng: np.random.Generator, n: int) -> list[str]:
    """Plain decimals of every shape numtext reads itself: 1-16 characters, signs, leading zeros,
    '.5' and '5.', up to 16 digits (some past 2**53, which it must leave to float())."""
    out = []
    for _ in range(n):
        kind = rng.integers(6)
        x = rng.standard_normal() * 10.0 ** rng.integers(-6, 7)
        if kind == 0:
            out.append(f"{x:.{rng.integers(0, 9)}f}")
        elif kind == 1:
            out.append(str(int(x)))
        elif kind == 2:
            out.append(f"{x:.{rng.integers(1, 9)}f}".rstrip("0"))
        elif kind == 3:
            fraction = str(rng.integers(0, 10**6)).zfill(int(rng.integers(1, 7)))
            out.append("-" * int(rng.integers(2)) + "." + fraction)
        else:
            digits = str(rng.integers(0, 10 ** int(rng.integers(1, 17))))
            cut = int(rng.integers(0, len(digits) + 1))
            sign = "-" if rng.random() < 0.5 else ""
            zeros = "0" * int(rng.integers(0, 3))
            out.append(sign + zeros + (digits[:cut] + "." + digits[cut:] if kind == 5 else digits))
    return out


@pytest.mark.parametrize("seed", range(6))
def test_plain_decimals_read_bit_for_bit_as_float_reads_them(seed: int) -> None:
    rng = np.random.default_rng(seed)
    columns = int(rng.integers(1, 40))
    rows = int(rng.integers(1, 300))
    tokens = plain_tokens(rng, rows * columns)
    gap = [" ", "  ", "\t", " \t"][seed % 4]
    lines = [gap.join(tokens[r * columns:(r + 1) * columns]) + " " * (seed % 2) for r in range(rows)]
    lines.insert(rows // 2, "")  # blank lines are skipped, as numpy's reader skips them
    got = read("\n".join(lines) + "\n" * (seed % 3 > 0), columns)
    expected = np.array([float(t) for t in tokens]).reshape(rows, columns)
    assert got is not None
    assert same_bits(got, expected)


def test_mantissas_at_the_edge_of_exact_doubles() -> None:
    tokens = ["9007199254740991", "9007199254740992", "9007199254740993", "900719925474099.3",
              "-0.9007199254740993", "1234567890123456", "0.000000000000001", "-0", "-0.0", "007",
              "99999999", "-9999999", "12345678.", ".12345678", "1.000000000000001"]
    tokens += ["0.5"] * 16 * len(tokens)  # so the few past 16 characters are rare
    got = read(" ".join(tokens) + "\n", len(tokens))
    assert got is not None
    assert same_bits(got, np.array([[float(t) for t in tokens]]))


@pytest.mark.parametrize("seed", range(3))
def test_exponents_read_bit_for_bit_as_float_reads_them(seed: int) -> None:
    # As Bandai's files and '%g' write them, and every other form float() takes with powers of
    # ten within 22 of the mantissa's digits; the rest (1e-300, 20 digits) rare, read by float().
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(3000) * 10.0 ** rng.integers(-12, 13, 3000)
    forms = ["{:g}", "{:e}", "{:.3E}", "{:.10e}", "{:.12g}", "{:+.2e}"]
    tokens = [forms[k % len(forms)].format(float(v)) for k, v in enumerate(x)]
    for k in range(0, len(tokens), 97):
        tokens[k] = ["1e-300", "-2.5E+300", "12345678901234567890"][k % 3]
    tokens[:30] = [f"{v:.4f}" for v in x[:30]]  # the first line decides; see below
    got = read("\n".join(" ".join(tokens[r * 30:(r + 1) * 30]) for r in range(100)), 30)
    assert got is not None
    assert same_bits(got, np.array([float(t) for t in tokens]).reshape(100, 30))


def test_short_exponents_side_by_side() -> None:
    # Each number's word holds the one before it: its 'e' must not be taken for this one's.
    body = "1 2 3 4 5 6\n" + "1e5 2E-3 -1e+2 .5e1 7e0 1.e2\n" * 4 + "9e9 1e-9 3 2e2 1 0e0\n"
    got = read(body, 6)
    assert got is not None
    tokens = body.split()
    assert same_bits(got, np.array([float(t) for t in tokens]).reshape(-1, 6))


def test_rows_whose_first_line_is_full_of_exponents_go_to_numpy() -> None:
    # Where exponents are common numpy's reader is as fast, so those files are left to it.
    row = " ".join(["1.5e-06"] * 5 + ["0.25"] * 30)
    assert read((row + "\n") * 3, 35) is None
    assert read(("0.5 " * 35 + "\n") + (row + "\n") * 3, 35) is not None


@pytest.mark.parametrize("body, columns", [
    ("1 2 3\n4 5\n", 3),           # a short line
    ("1 2 3\n4 5 6 7\n", 3),       # a long one
    ("1 2 3\n4 5 6\n7", 3),        # a short last line without its line break
    ("1 2\x00 3\n", 3),            # a control byte
    ("1 2 3\x0b\n", 3),            # one that is whitespace to float()
    ("1 2 3\n1 \xb9 3\n", 3),       # not ASCII ('\xb9' is a superscript one in Latin-1)
    ("1 2 3\n1 1\xff 3\n", 3),
    ("1 2-3 4\n", 3),
    ("1 2.3.4 5\n", 3),
    ("1 - 5\n", 3),
    ("1 . 5\n", 3),
    ("1 -. 5\n", 3),
    ("1 -1234567.89.1 5\n", 3),  # the same in two words
    ("1 --123456789 5\n", 3),
    ("1 123456789-1 5\n", 3),
    ("1 -.-12345678 5\n", 3),
    ("1 -12345678.. 5\n", 3),
    ("1 1_0 5\n", 3),              # float() takes it, numpy's reader does not
    ("1 # 5\n", 3),
    ("1 abc 5\n", 3),
    ("", 3),
    ("\n\n", 3),
])
def test_anything_else_is_left_to_the_general_reader(body: str, columns: int) -> None:
    assert read(body, columns) is None


def test_every_bvh_in_the_test_data_reads_as_numpys_reader_does() -> None:
    paths = sorted(DATA.rglob("*.bvh"))
    assert len(paths) >= 20
    for path in paths:
        data = path.read_bytes().replace(b"\r\n", b"\n")
        at = data.index(b"\n", data.index(b"Frame Time")) + 1
        expected = np.loadtxt(io.BytesIO(data[at:]), dtype=np.float64, comments=None, ndmin=2)
        got = numtext.rows(data, at, expected.shape[1])
        if got is None:  # Bandai's: a quarter of the numbers have exponents
            assert path.parent.name == "bandai", path.name
            continue
        assert same_bits(got, expected), path.name


@pytest.mark.parametrize("token", ["2-3", "2.3.4", "-", ".", "-.", "--1", "1-", "+-1", "-+1", "1+2",
                                   "--123456789", "123456789-1", "-.-12345678", "-1234567.89.1",
                                   "12345678..", "1_0", "#", "abc", "0x10", "1,5", "1e", "nan_", "e5",
                                   "1e+", "1e5.0", "1.2e3e4", "1e-+5", "-e5", ".e5", "1ee5", "1e5-"])
def test_a_malformed_number_among_plain_ones_is_refused(token: str) -> None:
    # Among 99 plain numbers the one is read alone (rare), so the word arithmetic must refuse it.
    row = ["0.5"] * 99
    row[50] = token
    assert read(" ".join(row) + "\n", 99) is None


def test_memory_stays_near_the_result_on_a_long_take() -> None:
    # A megabyte of lines at a time: the work arrays are a few times a block, not the take.
    data = (DATA / "cmu" / "subject02" / "02_01.bvh").read_bytes()
    at = data.index(b"\n", data.index(b"Frame Time")) + 1
    rows_text = data[at:] * 20  # about 5 MB
    tracemalloc.start()
    try:
        got = numtext.rows(rows_text, 0, 96)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert got is not None and got.shape == (344 * 20, 96)
    assert peak < got.nbytes * 2 + 16 * (1 << 20)
