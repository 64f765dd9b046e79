"""BVH read and write.

Joints are named as Blender's importer names its bones (spaces become `_`, a repeated name gets
`.001`, names are cut to 63 UTF-8 bytes), so a Clip and an imported armature agree joint for joint.
Position channels are the joint's local translation and replace its OFFSET; position axes a
joint lacks are 0 (as in Blender). Rotation channels apply in the order listed, intrinsically:
`Zrotation Xrotation Yrotation` is Rz Rx Ry acting on column vectors.

Every malformed input raises `BVHError` naming the file and line. The hierarchy is parsed
iteratively (any nesting depth), the motion block with one bulk numpy call; only when that call
fails does a per-line pass run, to say which line is wrong.
"""

from __future__ import annotations

import io
import math
import os
import re
import warnings
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from . import files, numtext, quat, skeleton
from .clip import POSITION_CHANNELS, ROTATION_CHANNELS, Clip, snap_fps

__all__ = ["BVHError", "BVHWarning", "dumps", "load", "loads", "save"]

_CHANNEL_NAMES = {c.lower(): c for c in POSITION_CHANNELS + ROTATION_CHANNELS}
# Values per block of frames converted to quaternions at a time: the block's arrays fit in cache.
_BLOCK = 1 << 15
_MAX_NAME_BYTES = 63  # Blender's MAX_NAME (64) less the terminating NUL
# Control bytes never found in text (tab, LF, CR excluded): their presence means binary junk.
_BINARY = re.compile(rb"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
# Every byte _BINARY does not match: deleting these (bytes.translate) leaves only junk, a scan
# ~8x faster than the regex search, which then runs only to find where the junk is.
_TEXT_BYTES = bytes(b for b in range(256) if not _BINARY.match(bytes([b])))
# Deeper joints are indented no further: tabs per level would grow a deep chain's text with the
# square of its depth (10k levels: 250 MB), and no reader counts them.
_MAX_INDENT = 32
_MOTION_LINE = re.compile(rb"^[ \t]*motion[ \t]*$", re.IGNORECASE | re.MULTILINE)
# Possessive quantifiers: a stray token after a long run of spaces must not make the match
# backtrack through every split of the run (quadratic: 4 s on a 40 KB line).
_FRAMES = re.compile(r"^frames\s*+:\s*+(\S*+)\s*+$", re.IGNORECASE)
_FRAME_TIME = re.compile(r"^frame\s*+time\s*+:\s*+(\S*+)\s*+$", re.IGNORECASE)


class BVHError(ValueError):
    """A malformed BVH file; `path` and `line` (1-based, or None) say where."""

    def __init__(self, message: str, path: str = "BVH text", line: int | None = None) -> None:
        self.path = path
        self.line = line
        # A report, not a dump: a megabyte token stays out of the message (and the UI it reaches).
        self.reason = message if len(message) <= _MAX_REASON else message[:_MAX_REASON - 3] + "..."
        where = f"{path}, line {line}" if line is not None else path
        # A file name that is not valid UTF-8 (os.fsdecode's lone surrogates) must still print.
        where = where.encode("utf-8", "backslashreplace").decode("utf-8")
        super().__init__(f"{where}: {self.reason}")


_MAX_REASON = 300


class BVHWarning(UserWarning):
    """A BVH file loaded, but something in it looks wrong (e.g. more frames than declared)."""


# -- reading ------------------------------------------------------------------------------------

def load(path: str | os.PathLike[str], *, strict: bool = False) -> Clip:
    """Read a BVH file into a Clip (named after the file's stem)."""
    clip = _parse(Path(path).read_bytes(), str(path), strict)
    clip.name = Path(path).stem
    return clip


def loads(text: str | bytes, *, strict: bool = False, source: str = "BVH text") -> Clip:
    """Read BVH text (str or bytes) into a Clip; errors name `source`."""
    if not isinstance(text, str):
        return _parse(bytes(text), source, strict)
    try:
        # "surrogateescape" gives back the bytes of text decoded that way (os.fsdecode, say).
        data = text.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError as e:
        line = len(re.split(r"\r\n|\r|\n", text[:e.start]))
        raise BVHError("text holds a lone surrogate (not valid Unicode)", source, line) from None
    return _parse(data, source, strict)


class _Joint:
    __slots__ = ("channels", "line", "name", "offset", "parent")

    def __init__(self, name: str, parent: int, line: int) -> None:
        self.name = name
        self.parent = parent
        self.line = line
        self.offset: list[float] | None = None
        self.channels: tuple[str, ...] | None = None


def _parse(data: bytes, path: str, strict: bool) -> Clip:
    last_cr = data.rfind(b"\r")
    if last_cr >= 0:
        # Only up to the last CR: some files (CMU's 131_*) end just their hierarchy lines in CRLF.
        end = last_cr + 2 if data[last_cr + 1:last_cr + 2] == b"\n" else last_cr + 1
        data = data[:end].replace(b"\r\n", b"\n").replace(b"\r", b"\n") + data[end:]
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    text = _Text(data)
    # The head is checked for binary junk now; the motion rows only if the fast read of them
    # fails (it takes nothing but numbers, spaces, tabs and line breaks), else with everything.
    _check_text(data, 0 if text.whole else text.rows_at, path)
    joints, ends, motion_line = _parse_hierarchy(text.lines, path)
    return _parse_motion(text, motion_line, joints, ends, path, strict)


def _check_text(data: bytes, stop: int, path: str, start: int = 0) -> None:
    """BVHError naming the line of the first control byte in data[start:stop] (all if stop is 0)."""
    part = data[start:stop or len(data)]
    junk = _BINARY.search(part) if part.translate(None, _TEXT_BYTES) else None
    if junk:
        line = data.count(b"\n", 0, start + junk.start()) + 1
        raise BVHError(f"binary data (byte 0x{junk.group()[0]:02x}): not a BVH text file", path, line)


class _Text:
    """The (LF-only, checked) file as lines, split only as far as needed.

    Decoding a whole take and splitting it into one str per line costs time and memory numpy does
    not need, so for ASCII data `lines` starts as the head only (HIERARCHY to the 'Frame Time' line)
    and numpy reads the motion rows from the bytes; the rest is split only to report a bad, missing
    or extra row.
    """

    def __init__(self, data: bytes) -> None:
        self.data = data
        end = _head_end(data) if data.isascii() else -1
        self.whole = end < 0
        # Byte offset of the line after the head, where the motion rows start.
        self.rows_at = end + 1
        self.lines = _decode(data).split("\n") if self.whole else data[:end].decode("ascii").split("\n")

    def all_lines(self) -> list[str]:
        if not self.whole:
            self.lines = _decode(self.data).split("\n")
            self.whole = True
        return self.lines

    def rows(self, first: int) -> list[str] | io.BytesIO:
        """Lines from index `first` on, as np.loadtxt takes them."""
        if self.whole or first != len(self.lines):
            return self.all_lines()[first:]
        stream = io.BytesIO(self.data)
        stream.seek(self.rows_at)
        return stream

    def count(self, first: int) -> int:
        """len(self.all_lines()[first:]), without splitting."""
        if self.whole or first != len(self.lines):
            return len(self.all_lines()) - first
        return self.data.count(b"\n", self.rows_at) + 1


def _decode(data: bytes) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        # Some exporters write Latin-1 joint names; control bytes were already refused above.
        return data.decode("latin-1")


def _head_end(data: bytes) -> int:
    """Offset of the line break ending the second non-blank line after the first MOTION line (where
    'Frame Time' belongs), or -1 if the file ends first. For ASCII data past the binary check, whose
    only whitespace inside a line is space and tab: there _MOTION_LINE matches exactly the lines
    _parse_hierarchy takes for MOTION, so it returns or raises at or before this one."""
    motion = _MOTION_LINE.search(data)
    if motion is None:
        return -1
    end, found = motion.end(), 0
    while found < 2:
        start = end + 1
        end = data.find(b"\n", start)
        if end < 0:
            return -1
        if data[start:end].strip():
            found += 1
    return end


def _parse_hierarchy(lines: list[str], path: str) -> tuple[list[_Joint], list[tuple[int, list[float]]], int]:
    """Joints, End Sites (parent, offset) and the index of the MOTION line."""
    joints: list[_Joint] = []
    ends: list[tuple[int, list[float]]] = []
    # Open blocks: ("joint", index) or ("end", end index). Iterative, so nesting has no limit.
    stack: list[tuple[str, int]] = []
    expect_brace: tuple[str, int] | None = None
    seen_hierarchy = False
    n = len(lines)
    i = 0
    while i < n:
        tokens = lines[i].split()
        lineno = i + 1
        i += 1
        if not tokens:
            continue
        key = tokens[0].lower()
        if not seen_hierarchy:
            if key != "hierarchy" or len(tokens) != 1:
                raise BVHError(f"expected HIERARCHY, found {_show(lines[i - 1])}", path, lineno)
            seen_hierarchy = True
            continue
        if expect_brace is not None:
            if tokens != ["{"]:
                raise BVHError(f"expected '{{' to open the block, found {_show(lines[i - 1])}", path, lineno)
            stack.append(expect_brace)
            expect_brace = None
            continue
        if key in ("root", "joint"):
            if key == "root" and stack:
                raise BVHError("ROOT inside another joint (missing '}'?)", path, lineno)
            if key == "joint" and (not stack or stack[-1][0] != "joint"):
                raise BVHError("JOINT outside a joint block", path, lineno)
            name_tokens = tokens[1:]
            opens = bool(name_tokens) and name_tokens[-1] == "{"
            if opens:
                name_tokens = name_tokens[:-1]
            if not name_tokens:
                raise BVHError(f"{tokens[0]} without a name", path, lineno)
            parent = stack[-1][1] if stack else -1
            joints.append(_Joint("_".join(name_tokens), parent, lineno))
            block = ("joint", len(joints) - 1)
            if opens:
                stack.append(block)
            else:
                expect_brace = block
        elif key == "end":
            if len(tokens) < 2 or tokens[1].lower() != "site":
                raise BVHError(f"expected 'End Site', found {_show(lines[i - 1])}", path, lineno)
            if not stack or stack[-1][0] != "joint":
                raise BVHError("End Site outside a joint block", path, lineno)
            ends.append((stack[-1][1], []))
            block = ("end", len(ends) - 1)
            if tokens[-1] == "{":
                stack.append(block)
            else:
                expect_brace = block
        elif key == "offset":
            if not stack:
                raise BVHError("OFFSET outside a joint block", path, lineno)
            offset = _numbers(tokens[1:], 3, "OFFSET", path, lineno)
            kind, idx = stack[-1]
            if kind == "end":
                if ends[idx][1]:
                    raise BVHError("second OFFSET in one End Site", path, lineno)
                ends[idx] = (ends[idx][0], offset)
            else:
                if joints[idx].offset is not None:
                    raise BVHError(f"second OFFSET for joint {joints[idx].name!r}", path, lineno)
                joints[idx].offset = offset
        elif key == "channels":
            if not stack or stack[-1][0] != "joint":
                raise BVHError("CHANNELS outside a joint block", path, lineno)
            joint = joints[stack[-1][1]]
            if joint.channels is not None:
                raise BVHError(f"second CHANNELS for joint {joint.name!r}", path, lineno)
            joint.channels = _channels(tokens, path, lineno)
        elif key == "}":
            if len(tokens) != 1:
                raise BVHError(f"unexpected text after '}}': {_show(lines[i - 1])}", path, lineno)
            if not stack:
                raise BVHError("'}' without an open block", path, lineno)
            kind, idx = stack.pop()
            if kind == "end" and not ends[idx][1]:
                raise BVHError("End Site without an OFFSET", path, lineno)
            if kind == "joint" and joints[idx].offset is None:
                raise BVHError(f"joint {joints[idx].name!r} has no OFFSET", path, joints[idx].line)
        elif key == "motion":
            if len(tokens) != 1:
                raise BVHError(f"unexpected text after MOTION: {_show(lines[i - 1])}", path, lineno)
            if stack:
                kind, idx = stack[-1]
                what = f"joint {joints[idx].name!r}" if kind == "joint" else "an End Site"
                raise BVHError(f"MOTION before the block of {what} is closed (missing '}}')", path, lineno)
            if not joints:
                raise BVHError("MOTION before any ROOT", path, lineno)
            return joints, ends, i - 1
        else:
            raise BVHError(f"unknown keyword {tokens[0]!r}", path, lineno)
    if not seen_hierarchy:
        raise BVHError("empty file: expected HIERARCHY", path, None)
    last = _last_content_line(lines)
    if expect_brace is not None or stack:
        raise BVHError("file ends inside the HIERARCHY (truncated?)", path, last)
    raise BVHError("no MOTION section (truncated?)", path, last)


def _show(line: str) -> str:
    text = line.strip()
    return repr(text if len(text) <= 40 else text[:37] + "...")


def _numbers(tokens: Sequence[str], count: int, what: str, path: str, lineno: int) -> list[float]:
    if len(tokens) != count:
        raise BVHError(f"{what} needs {count} numbers, found {len(tokens)}", path, lineno)
    values = []
    for tok in tokens:
        try:
            v = _float(tok)
        except ValueError:
            raise BVHError(f"{what}: {_show(tok)} is not a number", path, lineno) from None
        if not math.isfinite(v):
            raise BVHError(f"{what}: {tok!r} is not a finite number", path, lineno)
        values.append(v)
    return values


def _float(token: str) -> float:
    """float(token), refusing what numpy's reader refuses (float() also takes '1_0' and '١')."""
    if "_" in token or not token.isascii():
        raise ValueError(f"not a number: {token!r}")
    return float(token)


def _whole(token: str) -> int | None:
    """A count in ASCII digits, else None (int() also takes '²', and refuses > 4300 digits)."""
    if not (token.isascii() and token.isdigit()):
        return None
    try:
        return int(token)
    except ValueError:
        return None


def _channels(tokens: list[str], path: str, lineno: int) -> tuple[str, ...]:
    count = _whole(tokens[1]) if len(tokens) >= 2 else None
    if count is None:
        raise BVHError("CHANNELS needs a count, then the channel names", path, lineno)
    names = tokens[2:]
    if count != len(names):
        raise BVHError(f"CHANNELS declares {count} channels but names {len(names)}", path, lineno)
    channels = []
    for name in names:
        canonical = _CHANNEL_NAMES.get(name.lower())
        if canonical is None:
            raise BVHError(f"unknown channel {name!r}", path, lineno)
        if canonical in channels:
            raise BVHError(f"channel {canonical} listed twice", path, lineno)
        channels.append(canonical)
    return tuple(channels)


def _frames_header(lines: list[str], start: int, path: str) -> tuple[int, float, int]:
    """(declared frames, frame time, index of the first motion line) after MOTION."""
    i = start + 1
    while i < len(lines) and not lines[i].strip():
        i += 1
    if i >= len(lines):
        raise BVHError("file ends after MOTION: expected 'Frames:'", path, _last_content_line(lines))
    m = _FRAMES.match(lines[i].strip())
    if not m:
        raise BVHError(f"expected 'Frames: <count>', found {_show(lines[i])}", path, i + 1)
    declared = _whole(m.group(1))
    if declared is None:
        raise BVHError(f"Frames: {_show(m.group(1))} is not a whole number", path, i + 1)
    i += 1
    while i < len(lines) and not lines[i].strip():
        i += 1
    if i >= len(lines) or not _FRAME_TIME.match(lines[i].strip()):
        found = _show(lines[i]) if i < len(lines) else "the end of the file"
        line = i + 1 if i < len(lines) else _last_content_line(lines)
        raise BVHError(f"missing 'Frame Time: <seconds>' (found {found})", path, line)
    value = _FRAME_TIME.match(lines[i].strip()).group(1)  # type: ignore[union-attr]
    try:
        frame_time = _float(value)
    except ValueError:
        raise BVHError(f"Frame Time {_show(value)} is not a number", path, i + 1) from None
    if not (frame_time > 0 and math.isfinite(frame_time)):
        raise BVHError(f"Frame Time must be a positive number of seconds, not {value}", path, i + 1)
    if not math.isfinite(1.0 / frame_time):
        raise BVHError(f"Frame Time {value} is too small: frames per second overflow", path, i + 1)
    return declared, frame_time, i + 1


def _parse_motion(text: _Text, motion_line: int, joints: list[_Joint],
                  ends: list[tuple[int, list[float]]], path: str, strict: bool) -> Clip:
    declared, frame_time, first = _frames_header(text.lines, motion_line, path)
    channels = [j.channels or () for j in joints]
    n_channels = sum(len(c) for c in channels)
    if n_channels == 0:
        # No values to count, so each frame is a (blank) line: the file's size bounds the clip,
        # and any other line holds values the CHANNELS do not declare.
        _diagnose_motion(text.all_lines()[first:], first, 0, path)
        values = np.zeros((min(declared, text.count(first)), 0))
    else:
        values = _motion_values(text, first, n_channels, path)
    frames = values.shape[0]
    if frames < declared:
        last = _last_content_line(text.all_lines())
        raise BVHError(f"Frames: declares {declared} frames but the file holds {frames} (truncated?)",
                       path, last)
    if frames > declared:
        row_line = first + _content_line_indices(text.all_lines()[first:])[declared] + 1
        message = f"Frames: declares {declared} frames but the file holds {frames}"
        if strict:
            raise BVHError(message, path, row_line)
        warnings.warn(f"{path}, line {row_line}: {message}; loading all of them", BVHWarning,
                      stacklevel=4)
    return _build_clip(joints, ends, channels, values, frame_time)


def _motion_values(text: _Text, first: int, n_channels: int, path: str) -> np.ndarray:
    values = _plain_rows(text, first, n_channels)
    if values is None:
        if not text.whole:
            _check_text(text.data, 0, path, start=text.rows_at)
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # "input contained no data" for Frames: 0
                values = np.loadtxt(text.rows(first), dtype=np.float64, comments=None, ndmin=2,
                                    encoding="latin-1")
        except ValueError:
            values = None
    if values is not None and values.size == 0:
        return np.zeros((0, n_channels))
    if values is None or values.shape[1] != n_channels or not np.isfinite(values).all():
        _diagnose_motion(text.all_lines()[first:], first, n_channels, path)
        raise AssertionError("motion block failed to parse but no line was found at fault")
    return values


def _plain_rows(text: _Text, first: int, n_channels: int) -> np.ndarray | None:
    """The motion rows read by `numtext.rows` (about twice as fast as numpy's reader) when
    they follow the head in ASCII text and hold nothing but finite plain numbers; else None, and
    the general read decides and names the line at fault."""
    if text.whole or first != len(text.lines) or text.rows_at >= len(text.data):
        return None
    values = numtext.rows(text.data, text.rows_at, n_channels)
    if values is None or not np.isfinite(values).all():
        return None
    return values


def _diagnose_motion(body: list[str], first: int, n_channels: int, path: str) -> None:
    """Raise BVHError for the first bad motion line (the slow path, run only on failure)."""
    for k, line in enumerate(body):
        tokens = line.split()
        if not tokens:
            continue
        lineno = first + k + 1
        if len(tokens) != n_channels:
            raise BVHError(f"frame line has {len(tokens)} values; the CHANNELS declare {n_channels}",
                           path, lineno)
        for tok in tokens:
            try:
                v = _float(tok)
            except ValueError:
                raise BVHError(f"{_show(tok)} is not a number", path, lineno) from None
            if not math.isfinite(v):
                raise BVHError(f"{_show(tok)} is not a finite number", path, lineno)


def _content_line_indices(body: list[str]) -> list[int]:
    return [k for k, line in enumerate(body) if line.strip()]


def _last_content_line(lines: list[str]) -> int:
    for k in range(len(lines) - 1, -1, -1):
        if lines[k].strip():
            return k + 1
    return len(lines)


def _build_clip(joints: list[_Joint], ends: list[tuple[int, list[float]]],
                channels: list[tuple[str, ...]], values: np.ndarray, frame_time: float) -> Clip:
    T, J = values.shape[0], len(joints)
    offsets = np.array([j.offset for j in joints], dtype=np.float64).reshape(J, 3)
    rotations = np.empty((T, J, 4))
    # Joints grouped by rotation order, so each order is one vectorized conversion: per order,
    # the joints and their rotation columns, joint by joint.
    by_order: dict[str, tuple[list[int], list[int]]] = {}
    still: list[int] = []
    moved: dict[int, list[tuple[int, int]]] = {}  # joint: (axis, column) of its position channels
    col = 0
    for j, chans in enumerate(channels):
        rot_cols, order = [], ""
        for c in chans:
            if c in POSITION_CHANNELS:
                moved.setdefault(j, []).append((POSITION_CHANNELS.index(c), col))
            else:
                rot_cols.append(col)
                order += c[0]
            col += 1
        if order:
            group = by_order.setdefault(order, ([], []))
            group[0].append(j)
            group[1].extend(rot_cols)
        else:
            still.append(j)
    rotations[:, still] = quat.identity()
    for order, (js, cols) in by_order.items():
        m, n = len(order), len(js)
        # A block of frames at a time, as [channel, frame, joint]: each channel contiguous, so
        # numpy runs every step as one vectorized loop (several times faster than over [T, J, 3]
        # strides), and the block's arrays stay in cache between the steps.
        step = max(1, _BLOCK // (m * n))
        sin = np.empty((m, min(step, T), n))
        cos = np.empty_like(sin)
        # Joints that follow one another (CMU's: the root ZYX, the rest ZXY) are written in place
        # through a slice; others through a scratch block and one scatter.
        run = slice(js[0], js[-1] + 1)
        quats = None if js[-1] - js[0] + 1 == n else np.empty((min(step, T), n, 4))
        for start in range(0, T, step):
            stop = min(start + step, T)
            block_sin, block_cos = sin[:, :stop - start], cos[:, :stop - start]
            for k in range(m):
                np.take(values[start:stop], cols[k::m], axis=1, out=block_sin[k], mode="clip")
            _half_angles(block_sin, block_cos)
            halves = [(block_cos[k], block_sin[k]) for k in range(m)]
            if quats is None:
                _euler_to_quat(halves, order, rotations[start:stop, run])
            else:
                _euler_to_quat(halves, order, quats[:stop - start])
                rotations[start:stop, js] = quats[:stop - start]
    positions = _positions(values, offsets, moved)
    end_parents = [p for p, _ in ends]
    end_offsets = np.array([o for _, o in ends], dtype=np.float64).reshape(len(ends), 3)
    return Clip(_blender_names([j.name for j in joints]), [j.parent for j in joints], offsets,
                rotations, positions, snap_fps(frame_time), channels=channels,
                end_parents=end_parents, end_offsets=end_offsets)


def _positions(values: np.ndarray, offsets: np.ndarray,
               moved: dict[int, list[tuple[int, int]]]) -> np.ndarray:
    """[T, J, 3] local translations: each joint's offset, its position channels in place of it.

    Written into the memory of `values` once every column has been read from it, when it holds
    enough: a fresh array the size of a take costs as much again in page faults as filling it."""
    T, J = values.shape[0], offsets.shape[0]
    taken = {(j, axis): values[:, c].copy() for j, axes in moved.items() for axis, c in axes}
    if values.size >= T * J * 3 and values.flags.c_contiguous and values.flags.writeable:
        positions = values.reshape(-1)[:T * J * 3].reshape(T, J, 3)
    else:
        positions = np.empty((T, J, 3))
    positions[...] = offsets
    for j in moved:
        positions[:, j] = 0.0
    for (j, axis), column in taken.items():
        positions[:, j, axis] = column
    return positions


def _half_angles(degrees: np.ndarray, cos: np.ndarray) -> None:
    """Sines of half the angles in place of the angles (degrees); their cosines into `cos`.

    Both from one tangent of the quarter angle, t = tan(a / 4): with r = 2 / (1 + t^2),
    sin(a / 2) = t r and cos(a / 2) = r - 1. numpy's float64 tan is vectorized where its sin and cos
    are scalar libm calls: several times faster, to a few ulp.
    """
    t = degrees
    t *= math.pi / 720.0
    np.tan(t, out=t)
    np.multiply(t, t, out=cos)
    cos += 1.0
    np.divide(2.0, cos, out=cos)
    t *= cos
    cos -= 1.0


def _euler_to_quat(halves: list[tuple[np.ndarray, np.ndarray]], order: str, out: np.ndarray) -> None:
    """Into out `[..., 4]`: the product, in channel order, of rotations about the axes of `order`
    (1-3 distinct axes), given each one's (cos, sin) of the half angle."""
    axes = ["XYZ".index(a) for a in order]
    i, (ci, si) = axes[0], halves[0]
    w, v = out[..., 0], out[..., 1:]
    if len(order) == 1:
        w[...] = ci
        v[...] = 0.0
        v[..., i] = si
        return
    j, (cj, sj) = axes[1], halves[1]
    k = 3 - i - j
    # e_i x e_j = e e_k: e is +1 when (i, j, k) is cyclic.
    e = 1.0 if j == (i + 1) % 3 else -1.0
    if len(order) == 2:
        # (ci cj, si cj e_i + ci sj e_j + si sj e_i x e_j)
        np.multiply(ci, cj, out=w)
        np.multiply(si, cj, out=v[..., i])
        np.multiply(ci, sj, out=v[..., j])
        np.multiply(si, sj, out=v[..., k])
        if e < 0:
            # Not np.negative(x, out=x): numpy 2.4 gets it wrong in place on some strided views.
            v[..., k] *= -1.0
        return
    # Three axes, i j k, multiplied out by hand: each component is a sum of two triple products
    # sharing their first two factors (four pair products in all), formed in contiguous scratch
    # and written once into the interleaved output.
    ck, sk = halves[2]
    cc, ss, sc, cs = (np.multiply(ci, cj), np.multiply(si, sj), np.multiply(si, cj), np.multiply(ci, sj))
    first, second = np.empty(ck.shape), np.empty(ck.shape)
    terms = ((w, cc, ck, ss, sk, -e), (v[..., i], sc, ck, cs, sk, e),
             (v[..., j], cs, ck, sc, sk, -e), (v[..., k], cc, sk, ss, ck, e))
    for target, a, c, p, r, sign in terms:
        np.multiply(a, c, out=first)
        np.multiply(p, r, out=second)
        (np.add if sign > 0 else np.subtract)(first, second, out=target)


def _blender_names(raw: list[str]) -> list[str]:
    """Bone names as Blender's importer makes them: cut to 63 UTF-8 bytes, repeats get .001."""
    names: list[str] = []
    taken: set[str] = set()
    # Per stem (the base as cut to make room for a suffix), the first suffix not yet known taken:
    # 10k joints of one name, or of long names sharing a stem, stay linear.
    next_k: dict[str, int] = {}
    for name in raw:
        name = _cut_bytes(name, _MAX_NAME_BYTES)
        if name in taken:
            base = name
            m = re.match(r"^(.*)\.(\d{3,})$", name)
            if m:
                base = m.group(1)
            stem = _cut_bytes(base, _MAX_NAME_BYTES - 4)
            k = next_k.get(stem, 1)
            while True:
                suffix = f".{k:03d}"
                candidate = _cut_bytes(base, _MAX_NAME_BYTES - len(suffix)) + suffix
                if candidate not in taken:
                    name = candidate
                    break
                k += 1
            next_k[stem] = k + 1
        taken.add(name)
        names.append(name)
    return names


def _cut_bytes(name: str, limit: int) -> str:
    encoded = name.encode("utf-8")
    if len(encoded) <= limit:
        return name
    return encoded[:limit].decode("utf-8", errors="ignore")


# -- writing ------------------------------------------------------------------------------------

def save(clip: Clip, path: str | os.PathLike[str]) -> None:
    """Write `clip` to a BVH file atomically (a temp file renamed into place)."""
    files.write_atomic(path, dumps(clip).encode("utf-8"))


def dumps(clip: Clip) -> str:
    """BVH text for `clip`: the channels it was read with, digits enough to round-trip to 1e-9.

    A joint is promoted to more channels only when its motion cannot be written with the ones it
    has (a rotation about an axis it lacks, a translation where it has no position channels).
    """
    J, T = clip.n_joints, clip.n_frames
    for what, values in (("offsets", clip.offsets), ("End Site offsets", clip.end_offsets),
                         ("rotations", clip.rotations), ("positions", clip.positions)):
        if not np.isfinite(values).all():
            raise ValueError(f"the clip's {what} hold NaN or infinite numbers, which BVH cannot carry")
    if not math.isfinite(1.0 / clip.fps):
        raise ValueError(f"the clip's rate {clip.fps:g} fps makes a Frame Time BVH cannot carry")
    layouts = [_save_layout(clip, j) for j in range(J)]
    order = _depth_first(clip.parents)
    columns: list[np.ndarray] = []
    for j in order:
        columns.extend(layouts[j][1])
    out = ["HIERARCHY"]
    kids: list[list[int]] = [[] for _ in range(J)]
    for j in order:
        if clip.parents[j] >= 0:
            kids[clip.parents[j]].append(j)
    end_sites: list[list[int]] = [[] for _ in range(J)]
    for e, p in enumerate(clip.end_parents):
        end_sites[p].append(e)
    # Iterative walk: ("open", j) writes the joint and queues its children; ("close", depth).
    stack: list[tuple[str, int, int]] = [("open", j, 0) for j in reversed(order) if clip.parents[j] < 0]
    while stack:
        action, j, depth = stack.pop()
        tab = "\t" * min(depth, _MAX_INDENT)
        if action == "close":
            out.append(f"{tab}}}")
            continue
        out.append(f"{tab}{'ROOT' if clip.parents[j] < 0 else 'JOINT'} {clip.names[j]}")
        out.append(f"{tab}{{")
        out.append(f"{tab}\tOFFSET {_fmt_row(clip.offsets[j])}")
        chans = layouts[j][0]
        out.append(f"{tab}\tCHANNELS {len(chans)}{''.join(' ' + c for c in chans)}")
        for e in end_sites[j]:
            out += [f"{tab}\tEnd Site", f"{tab}\t{{", f"{tab}\t\tOFFSET {_fmt_row(clip.end_offsets[e])}",
                    f"{tab}\t}}"]
        stack.append(("close", j, depth))
        stack.extend(("open", k, depth + 1) for k in reversed(kids[j]))
    out.append("MOTION")
    out.append(f"Frames: {T}")
    out.append(f"Frame Time: {1.0 / clip.fps:.15g}")
    if columns:
        table = np.stack(columns, axis=1)
        fmt = " ".join(["%.12g"] * table.shape[1])
        out.extend(fmt % tuple(row) for row in table.tolist())
    else:
        out.extend([""] * T)
    return "\n".join(out) + "\n"


def _fmt_row(values: np.ndarray) -> str:
    return " ".join(f"{v:.12g}" for v in values.tolist())


def _depth_first(parents: np.ndarray) -> list[int]:
    kids = skeleton.children(parents)
    roots = [j for j, p in enumerate(parents) if p < 0]
    order: list[int] = []
    stack = roots[::-1]
    while stack:
        j = stack.pop()
        order.append(j)
        stack.extend(reversed(kids[j]))
    return order


def _save_layout(clip: Clip, j: int) -> tuple[tuple[str, ...], list[np.ndarray]]:
    """(channel names, value columns) to write for joint j."""
    chans = clip.channels[j]
    pos = clip.positions[:, j]
    scale = max(1.0, float(np.abs(clip.offsets[j]).max()), float(np.abs(pos).max(initial=0.0)))
    tol = 1e-12 * scale
    pos_names = [c for c in chans if c in POSITION_CHANNELS]
    rot_order = "".join(c[0] for c in chans if c in ROTATION_CHANNELS)
    if pos_names:
        missing = [a for a in range(3) if POSITION_CHANNELS[a] not in pos_names]
        if missing and np.abs(pos[:, missing]).max(initial=0.0) > tol:
            pos_names = list(POSITION_CHANNELS)
    elif np.abs(pos - clip.offsets[j]).max(initial=0.0) > tol:
        pos_names = list(POSITION_CHANNELS)
    rot_order, angles = _rotation_layout(clip.rotations[:, j], rot_order)
    # Keep the file's channel order when nothing was promoted; promoted channels go
    # positions first, then rotations, as most files write them.
    wanted = set(pos_names) | {f"{a}rotation" for a in rot_order}
    if wanted == set(chans):
        names = tuple(chans)
    else:
        names = tuple(pos_names) + tuple(f"{a}rotation" for a in rot_order)
    cols = []
    for c in names:
        if c in POSITION_CHANNELS:
            cols.append(pos[:, POSITION_CHANNELS.index(c)])
        else:
            cols.append(np.degrees(angles[:, rot_order.index(c[0])]))
    return names, cols


def _rotation_layout(q: np.ndarray, order: str) -> tuple[str, np.ndarray]:
    """(rotation order to write, angles [T, len(order)] in radians) for one joint's rotations."""
    if len(order) == 3:
        return order, quat.to_euler(q, order)
    full = order + "".join(a for a in "ZXY" if a not in order)
    angles = quat.to_euler(q, full) if len(q) else np.zeros((0, 3))
    if np.abs(angles[:, len(order):]).max(initial=0.0) <= 1e-12:
        return order, angles[:, :len(order)]
    return full, angles
