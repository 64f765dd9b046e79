"""Rows of decimal numbers from ASCII text, all at once, exactly as `float()` reads them.

numpy's `loadtxt` is most of the time any BVH reader takes (it parses number by number). Motion
rows are decimals (`-17.3198`, `5.1072e-06`), so here each number's last 8 or 16 bytes are read
as 64-bit words and turned into digits with a few whole-array integer operations (SWAR: the eight
digits of a word combined by three multiplies), then into the float `float()` gives: an integer
mantissa below 2**53 multiplied or divided by an exact power of ten (at most 1e22) is correctly
rounded (Clinger's fast path). What lies outside that (more than 16 characters before an
exponent, powers past 22) is read by `float()` one by one when it is rare; anything else returns
None so that the caller's general reader decides and reports the line at fault. The text is read
a megabyte of whole lines at a time, so the work arrays stay a few times a block and the peak
about twice the result.
"""

from __future__ import annotations

import numpy as np

__all__ = ["rows"]

_U = np.uint64
_HIGH = _U(0x8080808080808080)
_LOW7 = _U(0x7F7F7F7F7F7F7F7F)
_ZEROS = _U(0x3030303030303030)  # '00000000'
_DOTS = _U(0x2E2E2E2E2E2E2E2E)  # '........'
_NINE_UP = _U(0x4646464646464646)  # + 0x46 sets a byte's top bit iff the byte is above '9'
_CASE = _U(0x2020202020202020)  # | this makes 'E' 'e'
_ES = _U(0x6565656565656565)  # 'eeeeeeee'
_DOT_TO_ZERO = _U(0x2E ^ 0x30)

# A word holds bytes b0..b7 with b0 lowest (little-endian), so a number's last l <= 8 bytes are
# the word's top l bytes: keep those, fill the rest with '0' (leading zeros), by length l.
_KEEP = np.array([0] + [(1 << 64) - (1 << (8 * (8 - n))) for n in range(1, 9)], dtype=np.uint64)
_FILL = _ZEROS & ~_KEEP
_FIRST = np.array([0] + [8 * (8 - n) for n in range(1, 9)], dtype=np.uint64)  # shift to byte 0
# By the dot's byte q (index 8 = -1: none): the bytes after it, before it, and the '0' that
# comes in at byte 0 when the bytes before it move up over it.
_ABOVE = np.array([((1 << 64) - 1) ^ ((1 << (8 * (q + 1))) - 1) for q in range(8)] + [(1 << 64) - 1],
                  dtype=np.uint64)
_BELOW = np.array([(1 << (8 * q)) - 1 for q in range(8)] + [0], dtype=np.uint64)
_LEAD = np.array([0x30] * 8 + [0], dtype=np.uint64)
_DIV8 = np.array([10.0 ** (7 - p) for p in range(8)] + [1.0])
# The same by place + 1 + 9 negative: the sign in the division (-0.0 stays -0.0).
_SIGNED_DIV8 = np.concatenate([_DIV8[8:], _DIV8[:8], -_DIV8[8:], -_DIV8[:8]])
# Two words (`_long`): the dot may be in either, so rather than moving bytes across them it is
# read as '0', which puts the digits before it one place too high; by its place p in the 16 bytes
# (16 for none) a modulus keeps the digits after it (for none: all of them), and the rest is
# divided by ten.
_POW10 = 10 ** np.arange(18, dtype=np.uint64)
_MOD16 = np.concatenate([_POW10[15::-1], _POW10[17:18]])
_DIV16 = np.array([10.0 ** (15 - p) for p in range(16)] + [1.0])
_AFTER8 = np.array([7 - p for p in range(8)] + [0])  # digits after the dot, by its place
_AFTER16 = np.array([15 - p for p in range(16)] + [0])
_POW10F = 10.0 ** np.arange(23)
_EXACT = _U(1 << 53)
_PAD = 24  # bytes before the text, so that every number's window lies inside the buffer
_CHUNK = 16384  # numbers per pass: a pass's arrays stay in cache
_BLOCK = 1 << 20  # bytes of whole lines read at a time
_RARE = 16  # at most one number in this many read by float() one by one
_MANY_EXPONENTS = 8  # the first line has exponents in more than one number in this many


def rows(data: bytes, start: int, columns: int) -> np.ndarray | None:
    """`[rows, columns]` float64: the numbers in ASCII `data[start:]`, separated by spaces and
    tabs, lines of exactly `columns` numbers (blank lines skipped); None when the text is anything
    else (a control byte, a line of another length, a token `float()` refuses, many non-plain
    numbers, no numbers at all)."""
    if columns <= 0 or not 0 <= start < len(data):
        return None
    line_end = data.find(b"\n", start)
    first_line = data[start:line_end if line_end >= 0 else len(data)]
    if (first_line.count(b"e") + first_line.count(b"E")) * _MANY_EXPONENTS > columns:
        return None  # numpy's reader is as fast where exponents are common (Bandai's files)
    # Whole lines a block at a time: the work arrays stay a few times a block, not the text.
    parts = []
    while start < len(data):
        stop = data.find(b"\n", start + _BLOCK)
        stop = len(data) if stop < 0 else stop + 1
        part = _block(data, start, stop, columns)
        if part is None:
            return None
        parts.append(part)
        start = stop
    values = parts[0] if len(parts) == 1 else np.concatenate(parts)
    return values.reshape(-1, columns) if values.size else None


def _block(data: bytes, start: int, stop: int, columns: int) -> np.ndarray | None:
    """The numbers of whole lines data[start:stop], flat; None as `rows`."""
    text = np.frombuffer(data, np.uint8, count=stop - start, offset=start)
    buf = np.empty(_PAD + text.size + 1, np.uint8)
    buf[:_PAD] = 32
    buf[_PAD:-1] = text
    buf[-1] = 10
    newlines = np.flatnonzero(text == 10)
    # Bytes below 32 or above 127 (wrapped to 96 and up): only line breaks and tabs may be there,
    # for the digit tests below take ASCII.
    if np.count_nonzero(text - np.uint8(32) >= 96) != newlines.size + np.count_nonzero(text == 9):
        return None  # a control byte or not ASCII: the general reader names its line
    blank = buf <= 32
    edges = np.flatnonzero(blank[1:] != blank[:-1])
    edges += 1
    starts, ends = edges[0::2], edges[1::2]
    count = starts.size
    if count % columns:
        return None
    newlines += _PAD
    per_line = np.diff(np.searchsorted(ends, newlines, side="right"), prepend=0)
    if np.any((per_line != 0) & (per_line != columns)) or count - per_line.sum() not in (0, columns):
        return None
    return _numbers(buf, starts, ends)


def _numbers(buf: np.ndarray, starts: np.ndarray, ends: np.ndarray) -> np.ndarray | None:
    # words[i] is buf[i:i + 8] as one little-endian integer (an unaligned view, no copy).
    words = np.ndarray((buf.size - 7,), dtype="<u8", buffer=buf, strides=(1,))
    lengths = ends - starts
    values = np.empty(starts.size)
    plain = np.empty(starts.size, dtype=bool)
    for at in range(0, starts.size, _CHUNK):
        part = slice(at, at + _CHUNK)
        size = lengths[part]
        mantissa, place, neg, ok = _short(words, ends[part], np.minimum(size, 8))
        np.divide(mantissa, _SIGNED_DIV8[place + 1 + 9 * neg], out=values[part])
        plain[part] = ok & (size <= 8)
    rest = np.flatnonzero(~plain & (lengths >= 3) & (lengths <= 21))
    if rest.size:
        values[rest], plain[rest] = _exponents(words, ends[rest], lengths[rest])
    long = np.flatnonzero(~plain & (lengths > 8) & (lengths <= 16))
    if long.size:
        mantissa, place, neg, plain[long] = _long(words, ends[long], lengths[long])
        mantissa /= _DIV16[place]
        np.negative(mantissa, out=mantissa, where=neg)
        values[long] = mantissa
    odd = np.flatnonzero(~plain)
    if odd.size * _RARE > starts.size:
        return None
    for k in odd.tolist():
        token = buf[starts[k]:ends[k]].tobytes()
        if b"_" in token:  # float() takes '1_0', numpy's reader does not
            return None
        try:
            values[k] = float(token)
        except ValueError:
            return None
    return values


def _zero_bytes(word: np.ndarray) -> np.ndarray:
    """0x80 in each byte of `word` that is zero, 0 elsewhere (exact: no borrow between bytes)."""
    return ~(((word & _LOW7) + _LOW7) | word | _LOW7)


def _digits_only(word: np.ndarray) -> np.ndarray:
    """Whether every byte is '0'-'9' (bytes below 0x80: the text is ASCII)."""
    below = ~((word | _HIGH) - _ZEROS)
    return ((below | (word + _NINE_UP)) & _HIGH) == _U(0)


def _eight(word: np.ndarray) -> np.ndarray:
    """The 8-digit number whose digits (0-9) are the bytes, first digit in the lowest byte."""
    word = ((word & _U(0x0F0F0F0F0F0F0F0F)) * _U(10 * 256 + 1)) >> _U(8)
    word = ((word & _U(0x00FF00FF00FF00FF)) * _U(100 * 65536 + 1)) >> _U(16)
    return ((word & _U(0x0000FFFF0000FFFF)) * _U(10000 * (1 << 32) + 1)) >> _U(32)


def _dot_byte(zeros: np.ndarray) -> np.ndarray:
    """The byte (0-7) of the one 0x80 in each of `zeros`; -1 where there is none (and some byte
    where there are more: those numbers are refused)."""
    # (1 << 8 q) times 0x0102030405060708 has q + 1 in its top byte.
    top = ((zeros >> _U(7)) * _U(0x0102030405060708)) >> _U(56)
    return np.minimum(top, _U(8)).astype(np.int64) - 1


def _highest_byte(marks: np.ndarray) -> np.ndarray:
    """The highest byte (0-7) holding a 0x80 in each of `marks`; -1 where there is none."""
    _, exponent = np.frexp(marks.astype(np.float64))
    return (exponent - 1) >> 3


def _sign(word: np.ndarray, first: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(word with a leading '-' or '+' made '0', negative, signed) for the first byte at bit `first`."""
    byte = (word >> first) & _U(0xFF)
    neg = byte == _U(0x2D)
    signed = neg | (byte == _U(0x2B))
    word += ((_U(0x30) - byte) * signed.astype(np.uint64)) << first  # wraps only where unsigned (x 0)
    return word, neg, signed


def _short(words: np.ndarray, ends: np.ndarray, size: np.ndarray
           ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(mantissa, place, negative, plain) of numbers of 1-8 bytes ending at `ends`: the digits
    as an exact integer (float64), and the dot's byte in the word (-1 for none)."""
    word = words[ends - 8]
    word &= _KEEP[size]
    word |= _FILL[size]
    word, neg, signed = _sign(word, _FIRST[size])
    dot = _zero_bytes(word ^ _DOTS)
    plain = (dot & (dot - _U(1))) == _U(0)  # one dot at most
    place = _dot_byte(dot)  # -1 (none) indexes the tables' last entry
    # The dot taken out: the bytes before it move up one, a leading '0' comes in.
    word = (word & _ABOVE[place]) | ((word & _BELOW[place]) << _U(8)) | _LEAD[place]
    plain &= _digits_only(word)
    plain &= size > signed.astype(np.int64) + (place >= 0)  # a digit at least (bool + bool is or)
    return _eight(word - _ZEROS).astype(np.float64), place, neg, plain


def _long(words: np.ndarray, ends: np.ndarray, size: np.ndarray
          ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """As `_short` for numbers of 9-16 bytes (two words, `high` first); the dot's place is in
    the 16 bytes (16 for none)."""
    low = words[ends - 8]
    high_size = size - 8
    high = words[ends - 16] & _KEEP[high_size] | _FILL[high_size]
    high, neg, signed = _sign(high, _FIRST[high_size])
    dot_low, dot_high = _zero_bytes(low ^ _DOTS), _zero_bytes(high ^ _DOTS)
    one, zero = _U(1), _U(0)
    plain = ((dot_low & (dot_low - one)) == zero) & ((dot_high & (dot_high - one)) == zero)
    plain &= (dot_low == zero) | (dot_high == zero)
    low ^= (dot_low >> _U(7)) * _DOT_TO_ZERO
    high ^= (dot_high >> _U(7)) * _DOT_TO_ZERO
    plain &= _digits_only(low) & _digits_only(high)
    in_low, in_high = _dot_byte(dot_low), _dot_byte(dot_high)
    place = np.where(in_low >= 0, in_low + 8, np.where(in_high >= 0, in_high, 16))
    plain &= size > signed.astype(np.int64) + (place < 16)
    raw = _eight(high - _ZEROS) * _U(100_000_000) + _eight(low - _ZEROS)
    after = raw % _MOD16[place]
    mantissa = (raw - after) // _U(10) + after
    plain &= mantissa < _EXACT
    return mantissa.astype(np.float64), place, neg, plain


def _exponents(words: np.ndarray, ends: np.ndarray, size: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(values, plain) of numbers with an exponent ('-5.51765e-07'): a mantissa of 1-16 bytes
    and an exponent of 1-4 bytes, its power of ten and the mantissa's together within 22."""
    value = np.empty(ends.size)
    plain = np.zeros(ends.size, dtype=bool)
    # The 'e' or 'E' lies in the last 5 bytes, so in the last word: its highest one there.
    marks = _zero_bytes((words[ends - 8] | _CASE) ^ _ES)
    tail = 7 - _highest_byte(marks)  # bytes after it (8 for none); the number before may have one
    mantissa_size = size - tail - 1
    found = np.flatnonzero((tail >= 1) & (tail <= 4) & (mantissa_size >= 1) & (mantissa_size <= 16))
    if not found.size:
        return value, plain
    ends, tail, mantissa_size = ends[found], tail[found], mantissa_size[found]
    exponent, place, negative_exponent, ok = _short(words, ends, tail)
    ok &= place < 0
    exponent[negative_exponent] *= -1.0
    mantissa_end = ends - tail - 1
    for group, read, after in ((mantissa_size <= 8, _short, _AFTER8), (mantissa_size > 8, _long, _AFTER16)):
        mantissa, place, neg, good = read(words, mantissa_end[group], mantissa_size[group])
        power = exponent[group] - after[place]
        good &= np.abs(power) <= 22
        scale = _POW10F[np.minimum(np.abs(power), 22).astype(np.int64)]
        mantissa = np.where(power >= 0, mantissa * scale, mantissa / scale)
        np.negative(mantissa, out=mantissa, where=neg)
        value[found[group]] = mantissa
        plain[found[group]] = ok[group] & good
    return value, plain
