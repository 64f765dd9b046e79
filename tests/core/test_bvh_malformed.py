"""Malformed and quirky BVH input: every case loads right or raises BVHError naming file and line.

The table mutates a small hand-written file (line numbers below are counted by hand) and real CMU
files (read into memory, never written back). The fuzz test mutates real files at random and
requires that nothing but BVHError ever escapes, each case within a second.
"""

from __future__ import annotations

import functools
import math
import random
import re
import time
import traceback
import tracemalloc
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pytest
from fixtures import cmu_path

from core import bvh
from core.bvh import BVHError, BVHWarning
from core.clip import Clip

# -- the hand-written file --------------------------------------------------------------------

# 4 joints (Hips, Chest, Head, LeftLeg), 15 channels, 2 End Sites, 3 frames.
BASE = """\
HIERARCHY
ROOT Hips
{
  OFFSET 0 0 0
  CHANNELS 6 Xposition Yposition Zposition Zrotation Xrotation Yrotation
  JOINT Chest
  {
    OFFSET 0 10 0
    CHANNELS 3 Zrotation Xrotation Yrotation
    JOINT Head
    {
      OFFSET 0 5 0
      CHANNELS 3 Zrotation Xrotation Yrotation
      End Site
      {
        OFFSET 0 2 0
      }
    }
  }
  JOINT LeftLeg
  {
    OFFSET 3 -1 0
    CHANNELS 3 Zrotation Xrotation Yrotation
    End Site
    {
      OFFSET 0 -8 0
    }
  }
}
MOTION
Frames: 3
Frame Time: 0.0333333
1 2 3 0 0 0 30 0 0 0 0 0 0 0 0
4 5 6 90 0 0 0 45 0 0 0 0 0 0 0
7 8 9 0 0 90 0 0 0 0 0 0 0 -30 0
"""
ROOT_CHANNELS, CHEST, CHEST_BRACE, CHEST_OFFSET, CHEST_CHANNELS = 5, 6, 7, 8, 9
MOTION, FRAMES, FRAME_TIME, ROWS = 30, 31, 32, (33, 34, 35)


def edit(line: int, new: str | None, text: str = BASE) -> str:
    """`text` with 1-based `line` replaced by `new` (None deletes it)."""
    lines = text.split("\n")
    lines[line - 1:line] = [] if new is None else [new]
    return "\n".join(lines)


def insert(line: int, new: str, text: str = BASE) -> str:
    """`text` with `new` inserted so that it becomes line `line`."""
    lines = text.split("\n")
    lines.insert(line - 1, new)
    return "\n".join(lines)


def cut(n: int, text: str = BASE) -> str:
    """The first `n` lines of `text`, newline-terminated."""
    return "\n".join(text.split("\n")[:n]) + "\n"


def token(line: int, index: int, new: str, text: str = BASE) -> str:
    """`text` with whitespace token `index` of `line` replaced by `new`."""
    tokens = text.split("\n")[line - 1].split()
    tokens[index] = new
    return edit(line, " ".join(tokens), text)


def endings(text: str, *seps: str) -> str:
    """`text` with its line breaks replaced by `seps`, used in turn."""
    lines = text.split("\n")
    return "".join(line + seps[k % len(seps)] for k, line in enumerate(lines[:-1])) + lines[-1]


def chest(channels: str, values: Sequence[str]) -> str:
    """BASE with Chest's CHANNELS line set to `channels` and its 3 motion columns (6-8) replaced
    by `values`, one string per frame."""
    text = edit(CHEST_CHANNELS, f"    CHANNELS {len(channels.split())} {channels}".rstrip())
    for row, value in zip(ROWS, values, strict=True):
        tokens = text.split("\n")[row - 1].split()
        tokens[6:9] = value.split()
        text = edit(row, " ".join(tokens), text)
    return text


def rows(text: str, *new: str) -> str:
    for row, line in zip(ROWS, new, strict=True):
        text = edit(row, line, text)
    return text


def deep(n: int, *, close: bool = True, innermost_offset: bool = True) -> str:
    """A chain of `n` JOINTs below one ROOT, each nested in the one before."""
    out = ["HIERARCHY", "ROOT Hips", "{", "OFFSET 0 0 0", "CHANNELS 3 Xposition Yposition Zposition"]
    for k in range(n):
        out += [f"JOINT J{k}", "{"]
        if innermost_offset or k < n - 1:
            out.append("OFFSET 0 1 0")
    if close:
        out += ["}"] * (n + 1) + ["MOTION", "Frames: 1", "Frame Time: 0.1", "1 2 3"]
    return "\n".join(out) + "\n"


def qx(deg: float) -> tuple[float, float, float, float]:
    a = math.radians(deg) / 2
    return (math.cos(a), math.sin(a), 0.0, 0.0)


def qy(deg: float) -> tuple[float, float, float, float]:
    a = math.radians(deg) / 2
    return (math.cos(a), 0.0, math.sin(a), 0.0)


def qz(deg: float) -> tuple[float, float, float, float]:
    a = math.radians(deg) / 2
    return (math.cos(a), 0.0, 0.0, math.sin(a))


IDENTITY = (1.0, 0.0, 0.0, 0.0)

# -- real files, mutated in memory --------------------------------------------------------------

REAL = cmu_path("02_03").read_bytes()  # LF; MOTION on line 185, 174 rows on lines 188-361
REAL_09 = cmu_path("09_01").read_bytes()  # LF; 149 rows on lines 188-336, 96 values each
REAL_131 = cmu_path("131_01").read_bytes()  # CRLF on 160 hierarchy lines, LF on the rest


def bedit(data: bytes, line: int, new: bytes | None) -> bytes:
    """`data` with 1-based `line` replaced by `new` (None deletes it), keeping its line break."""
    lines = data.splitlines(keepends=True)
    old = lines[line - 1]
    lines[line - 1:line] = [] if new is None else [new + old[len(old.rstrip(b"\r\n")):]]
    return b"".join(lines)


def btoken(data: bytes, line: int, index: int, new: bytes) -> bytes:
    tokens = data.splitlines()[line - 1].split()
    tokens[index] = new
    return bedit(data, line, b" ".join(tokens))


def bcut(data: bytes, n: int) -> bytes:
    return b"".join(data.splitlines(keepends=True)[:n])


def bsplice(data: bytes, line: int, junk: bytes) -> bytes:
    """`junk` spliced into the middle of `line`."""
    start = sum(len(x) for x in data.splitlines(keepends=True)[:line - 1])
    middle = start + len(data.splitlines()[line - 1]) // 2
    return data[:middle] + junk + data[middle:]


# -- the table --------------------------------------------------------------------------------


@dataclass(frozen=True)
class Raises:
    line: int | None
    text: str


@dataclass(frozen=True)
class Loads:
    frames: int = 3
    joints: int | None = None
    names: tuple[str, ...] | None = None
    parents: tuple[int, ...] | None = None
    rotations: dict[tuple[int, int], tuple[float, ...]] = field(default_factory=dict)  # (frame, joint)
    positions: dict[tuple[int, int], tuple[float, ...]] = field(default_factory=dict)
    offsets: dict[int, tuple[float, ...]] = field(default_factory=dict)
    fps: float | None = None
    same_as: str | None = None  # "base" or a CMU clip name: every array must equal its load
    warns: bool = False
    check: Callable[[Clip], bool] | None = None


ROW_ERR = "the CHANNELS declare 15"
NOT_NUMBER = "is not a number"
JUNK = b"\x9c\x07\xfe\x00\x8b\x1f\xee"  # bytes a broken download or disk might leave

CASES: list[tuple[str, str | bytes, Raises | Loads]] = [
    # The base file itself, checked by hand: single-axis rotations, positions, names.
    ("base_file", BASE, Loads(
        names=("Hips", "Chest", "Head", "LeftLeg"), parents=(-1, 0, 1, 0), fps=30.0,
        rotations={(0, 0): IDENTITY, (1, 0): qz(90), (2, 0): qy(90), (0, 1): qz(30),
                   (1, 1): qx(45), (0, 2): IDENTITY, (2, 3): qx(-30)},
        positions={(0, 0): (1, 2, 3), (2, 0): (7, 8, 9), (1, 1): (0, 10, 0), (2, 3): (3, -1, 0)},
        offsets={1: (0, 10, 0), 3: (3, -1, 0)})),

    # -- truncation
    ("truncated_inside_a_joint_block", cut(12), Raises(12, "file ends inside the HIERARCHY")),
    ("truncated_without_final_newline", cut(12)[:-1], Raises(12, "file ends inside the HIERARCHY")),
    ("truncated_before_the_opening_brace", cut(CHEST), Raises(CHEST, "file ends inside the HIERARCHY")),
    ("truncated_mid_offset_line", cut(12)[:-3], Raises(12, "OFFSET needs 3 numbers, found 2")),
    ("truncated_after_the_hierarchy", cut(29), Raises(29, "no MOTION section")),
    ("truncated_after_motion_keyword", cut(MOTION), Raises(MOTION, "expected 'Frames:'")),
    ("truncated_after_frames_line", cut(FRAMES), Raises(FRAMES, "missing 'Frame Time")),
    ("truncated_motion_names_last_line", cut(34), Raises(34, "declares 3 frames but the file holds 2")),
    ("truncated_motion_then_blank_lines", cut(34) + "\n \n\t\n", Raises(34, "declares 3 frames")),
    ("truncated_motion_with_no_rows", cut(FRAME_TIME), Raises(FRAME_TIME, "the file holds 0")),
    ("truncated_mid_row", cut(33) + "4 5 6 90 0 0 0", Raises(34, f"frame line has 7 values; {ROW_ERR}")),

    # -- motion rows
    ("row_with_too_few_values", edit(34, "4 5 6 90 0 0 0 45 0 0 0 0 0 0"),
     Raises(34, f"has 14 values; {ROW_ERR}")),
    ("row_with_too_many_values", edit(34, "4 5 6 90 0 0 0 45 0 0 0 0 0 0 0 0"), Raises(34, "has 16 values")),
    ("row_with_nan", token(34, 7, "nan"), Raises(34, "'nan' is not a finite number")),
    ("row_with_inf", token(35, 0, "inf"), Raises(35, "'inf' is not a finite number")),
    ("row_with_minus_inf", token(33, 14, "-inf"), Raises(33, "'-inf' is not a finite number")),
    ("row_with_overflowing_value", token(34, 2, "1e999"), Raises(34, "'1e999' is not a finite number")),
    ("row_with_word", token(34, 3, "abc"), Raises(34, f"'abc' {NOT_NUMBER}")),
    ("row_with_two_dots", token(34, 3, "1.2.3"), Raises(34, f"'1.2.3' {NOT_NUMBER}")),
    ("row_with_double_minus", token(34, 3, "--5"), Raises(34, f"'--5' {NOT_NUMBER}")),
    ("row_with_hex", token(34, 3, "0x10"), Raises(34, f"'0x10' {NOT_NUMBER}")),
    ("row_with_underscore_digits", token(34, 3, "1_000"), Raises(34, f"'1_000' {NOT_NUMBER}")),
    ("row_with_arabic_indic_digit", token(34, 3, "\u0661"), Raises(34, NOT_NUMBER)),
    ("row_with_comma_decimal", token(35, 1, "8,5"), Raises(35, f"'8,5' {NOT_NUMBER}")),
    ("second_bad_row_is_not_reported_first", token(35, 1, "x", token(34, 1, "y")), Raises(34, "'y'")),
    ("text_after_the_rows", BASE + "MOTION\n", Raises(36, "frame line has 1 values")),

    # -- Frames / Frame Time
    ("frames_line_missing", edit(FRAMES, None), Raises(FRAMES, "expected 'Frames: <count>'")),
    ("frames_negative", edit(FRAMES, "Frames: -1"), Raises(FRAMES, "'-1' is not a whole number")),
    ("frames_word", edit(FRAMES, "Frames: abc"), Raises(FRAMES, "'abc' is not a whole number")),
    ("frames_empty", edit(FRAMES, "Frames:"), Raises(FRAMES, "'' is not a whole number")),
    ("frames_fraction", edit(FRAMES, "Frames: 2.5"), Raises(FRAMES, "'2.5' is not a whole number")),
    ("frames_superscript_digit", edit(FRAMES, "Frames: \u00b2"), Raises(FRAMES, "is not a whole number")),
    ("frames_with_5000_digits", edit(FRAMES, "Frames: " + "9" * 5000), Raises(FRAMES, "not a whole number")),
    ("frames_absurd_count", edit(FRAMES, "Frames: 99999999999999999999"),
     Raises(35, "declares 99999999999999999999 frames but the file holds 3")),
    ("frame_time_missing", edit(FRAME_TIME, None), Raises(FRAME_TIME, "missing 'Frame Time")),
    ("frame_time_zero", edit(FRAME_TIME, "Frame Time: 0"), Raises(FRAME_TIME, "positive number of seconds")),
    ("frame_time_negative", edit(FRAME_TIME, "Frame Time: -0.0333"), Raises(FRAME_TIME, "positive")),
    ("frame_time_word", edit(FRAME_TIME, "Frame Time: fast"), Raises(FRAME_TIME, f"'fast' {NOT_NUMBER}")),
    ("frame_time_empty", edit(FRAME_TIME, "Frame Time:"), Raises(FRAME_TIME, f"'' {NOT_NUMBER}")),
    ("frame_time_nan", edit(FRAME_TIME, "Frame Time: nan"), Raises(FRAME_TIME, "positive")),
    ("frame_time_inf", edit(FRAME_TIME, "Frame Time: inf"), Raises(FRAME_TIME, "positive")),
    ("frame_time_subnormal", edit(FRAME_TIME, "Frame Time: 1e-320"), Raises(FRAME_TIME, "too small")),

    # -- hierarchy keywords and counts
    ("hierarchy_keyword_missing", edit(1, None), Raises(1, "expected HIERARCHY, found 'ROOT Hips'")),
    ("unknown_keyword", insert(CHEST_CHANNELS, "    ROTATION 0 0 0"),
     Raises(CHEST_CHANNELS, "unknown keyword 'ROTATION'")),
    ("unknown_channel", edit(CHEST_CHANNELS, "CHANNELS 3 Zrotation Wrotation Yrotation"),
     Raises(CHEST_CHANNELS, "unknown channel 'Wrotation'")),
    ("channel_listed_twice", edit(CHEST_CHANNELS, "CHANNELS 3 Zrotation Xrotation Zrotation"),
     Raises(CHEST_CHANNELS, "channel Zrotation listed twice")),
    ("channels_count_below_names", edit(CHEST_CHANNELS, "CHANNELS 2 Zrotation Xrotation Yrotation"),
     Raises(CHEST_CHANNELS, "declares 2 channels but names 3")),
    ("channels_count_above_names", edit(CHEST_CHANNELS, "CHANNELS 4 Zrotation Xrotation Yrotation"),
     Raises(CHEST_CHANNELS, "declares 4 channels but names 3")),
    ("channels_count_absurd", edit(CHEST_CHANNELS, "CHANNELS 1000000000 Zrotation Xrotation Yrotation"),
     Raises(CHEST_CHANNELS, "declares 1000000000 channels but names 3")),
    ("channels_without_count", edit(CHEST_CHANNELS, "CHANNELS Zrotation Xrotation Yrotation"),
     Raises(CHEST_CHANNELS, "CHANNELS needs a count")),
    ("channels_superscript_count", edit(CHEST_CHANNELS, "CHANNELS \u00b3 Zrotation Xrotation Yrotation"),
     Raises(CHEST_CHANNELS, "CHANNELS needs a count")),
    ("second_channels_line", insert(10, "CHANNELS 1 Xrotation"),
     Raises(10, "second CHANNELS for joint 'Chest'")),
    ("offset_with_two_numbers", edit(CHEST_OFFSET, "OFFSET 0 10"),
     Raises(CHEST_OFFSET, "OFFSET needs 3 numbers, found 2")),
    ("offset_with_a_word", edit(CHEST_OFFSET, "OFFSET 0 ten 0"),
     Raises(CHEST_OFFSET, f"OFFSET: 'ten' {NOT_NUMBER}")),
    ("offset_with_nan", edit(CHEST_OFFSET, "OFFSET 0 nan 0"),
     Raises(CHEST_OFFSET, "'nan' is not a finite number")),
    ("offset_with_underscore_digits", edit(CHEST_OFFSET, "OFFSET 0 1_0 0"), Raises(CHEST_OFFSET, NOT_NUMBER)),
    ("second_offset_line", insert(CHEST_CHANNELS, "OFFSET 1 1 1"), Raises(CHEST_CHANNELS, "second OFFSET")),
    ("joint_without_offset", edit(CHEST_OFFSET, None), Raises(CHEST, "joint 'Chest' has no OFFSET")),
    ("end_site_without_offset", edit(16, None), Raises(16, "End Site without an OFFSET")),
    ("joint_without_name", edit(CHEST, "  JOINT"), Raises(CHEST, "JOINT without a name")),
    ("end_without_site", edit(14, "      End"), Raises(14, "expected 'End Site'")),
    ("root_inside_a_joint", edit(20, "  ROOT LeftLeg"), Raises(20, "ROOT inside another joint")),

    # -- braces
    ("missing_opening_brace", edit(CHEST_BRACE, None), Raises(CHEST_BRACE, "expected '{' to open the block")),
    ("extra_closing_brace_at_the_end", insert(MOTION, "}"), Raises(MOTION, "'}' without an open block")),
    # The extra '}' closes Hips early; the first line that cannot stand there is LeftLeg's.
    ("extra_closing_brace_mid_hierarchy", insert(20, "  }"), Raises(21, "JOINT outside a joint block")),
    ("motion_before_closing_braces", edit(29, None), Raises(29, "MOTION before the block of joint 'Hips'")),
    ("text_after_closing_brace", edit(19, "  } Head"), Raises(19, "unexpected text after '}'")),

    # -- binary junk, encodings, empty input
    ("nul_byte_in_a_row", token(34, 4, "0\x00").encode(), Raises(34, "binary data (byte 0x00)")),
    ("junk_bytes_spliced_into_hierarchy", bsplice(BASE.encode(), 12, JUNK),
     Raises(12, "binary data (byte 0x07)")),
    ("high_bytes_spliced_into_a_number", bsplice(BASE.encode(), 34, b"\xff\xfe"), Raises(34, NOT_NUMBER)),
    ("utf16_file", BASE.encode("utf-16"), Raises(1, "binary data")),
    ("lone_surrogate_in_text", edit(CHEST, "  JOINT Ch\ud800est"), Raises(CHEST, "lone surrogate")),
    ("empty_file", b"", Raises(None, "empty file")),
    ("whitespace_only_file", " \n\t\r\n  \r\n\n", Raises(None, "empty file")),
    ("bom_only_file", b"\xef\xbb\xbf", Raises(None, "empty file")),

    # -- line numbers are an editor's, whatever the line breaks
    ("crlf_error_line_counts_once", endings(token(34, 3, "abc"), "\r\n"), Raises(34, "'abc'")),
    ("lone_cr_error_line", endings(token(34, 3, "abc"), "\r"), Raises(34, "'abc'")),
    ("mixed_endings_error_line", endings(token(34, 3, "abc"), "\r\n", "\n", "\r"), Raises(34, "'abc'")),
    ("bom_does_not_shift_lines", "\ufeff" + edit(CHEST_OFFSET, "OFFSET 0 ten 0"),
     Raises(CHEST_OFFSET, "'ten'")),
    ("crlf_truncated_hierarchy", endings(cut(12), "\r\n"), Raises(12, "file ends inside the HIERARCHY")),

    # -- quirky but valid: must load with the right values
    ("crlf", endings(BASE, "\r\n"), Loads(same_as="base")),
    ("lone_cr", endings(BASE, "\r"), Loads(same_as="base")),
    ("mixed_line_endings", endings(BASE, "\r\n", "\n", "\r", "\n"), Loads(same_as="base")),
    ("tabs_for_spaces", re.sub(r" +", "\t", BASE), Loads(same_as="base")),
    ("padded_lines", "\n".join(f" \t{line}  \t" for line in BASE.split("\n")), Loads(same_as="base")),
    ("utf8_bom", b"\xef\xbb\xbf" + BASE.encode(), Loads(same_as="base")),
    ("utf8_bom_in_str_with_crlf", "\ufeff" + endings(BASE, "\r\n"), Loads(same_as="base")),
    ("trailing_blank_lines", BASE + "\n\n   \n\t\n", Loads(same_as="base")),
    ("blank_lines_between_rows", insert(35, "", insert(34, "  \t")), Loads(same_as="base")),
    ("blank_lines_in_the_hierarchy", insert(CHEST, "", insert(3, "\t")), Loads(same_as="base")),
    ("lower_case_keywords_and_channels", BASE.replace("HIERARCHY", "hierarchy").replace("JOINT", "joint")
     .replace("End Site", "end site").replace("CHANNELS 3 Zrotation Xrotation Yrotation",
                                              "channels 3 zrotation XROTATION yRotation"),
     Loads(same_as="base")),
    ("opening_braces_on_the_name_line", BASE.replace("Hips\n{", "Hips {").replace("Chest\n  {", "Chest {")
     .replace("End Site\n      {", "End Site {"), Loads(same_as="base")),
    ("no_space_after_colons", edit(FRAME_TIME, "Frame Time:0.0333333", edit(FRAMES, "Frames:3")),
     Loads(same_as="base")),
    ("exponents", rows(BASE, "1e-3 1E+2 2.5e0 0 0 0 30 0 0 0 0 0 0 0 0",
                       "4 5 6 9E1 0 0 0 4.5e+1 0 0 0 0 0 0 0", "7 8 9 0 0 90 0 0 0 0 0 0 0 -3e1 0"),
     Loads(positions={(0, 0): (0.001, 100, 2.5)},
           rotations={(1, 0): qz(90), (1, 1): qx(45), (2, 3): qx(-30)})),
    ("leading_dot_numbers", edit(CHEST_OFFSET, "OFFSET .5 -.5 +.25", token(34, 0, ".5", token(34, 1, "-.5"))),
     Loads(positions={(1, 0): (0.5, -0.5, 6), (0, 1): (0.5, -0.5, 0.25)}, offsets={1: (0.5, -0.5, 0.25)})),
    ("frame_time_with_leading_dot", edit(FRAME_TIME, "Frame Time: .0083333"), Loads(fps=120.0)),
    ("name_with_spaces", edit(CHEST, "  JOINT my  joint"),
     Loads(names=("Hips", "my_joint", "Head", "LeftLeg"))),
    ("name_with_colon", edit(2, "ROOT mixamorig:Hips"),
     Loads(names=("mixamorig:Hips", "Chest", "Head", "LeftLeg"))),
    ("duplicate_names", edit(10, "JOINT Chest"), Loads(names=("Hips", "Chest", "Chest.001", "LeftLeg"))),
    ("duplicate_names_next_to_a_numbered_one", edit(20, "JOINT Chest", edit(10, "JOINT Chest.001")),
     Loads(names=("Hips", "Chest", "Chest.001", "Chest.002"))),
    # 'é' is 2 UTF-8 bytes and would straddle the 63-byte limit: it goes whole.
    ("long_name_cut_at_a_character", edit(CHEST, "JOINT " + "a" * 62 + "\u00e9b"),
     Loads(names=("Hips", "a" * 62, "Head", "LeftLeg"))),
    ("long_duplicate_names", edit(10, "JOINT " + "x" * 70, edit(CHEST, "JOINT " + "x" * 70)),
     Loads(names=("Hips", "x" * 63, "x" * 59 + ".001", "LeftLeg"))),
    ("surrogate_escaped_latin1_name", edit(CHEST, "  JOINT Ch\udce9st"),
     Loads(names=("Hips", "Ch\u00e9st", "Head", "LeftLeg"))),
    ("latin1_name", BASE.encode().replace(b"JOINT Chest", b"JOINT Ch\xe9st"),
     Loads(names=("Hips", "Ch\u00e9st", "Head", "LeftLeg"))),
    ("zero_channel_joint", chest("", ["", "", ""]),
     Loads(rotations={(0, 1): IDENTITY, (1, 1): IDENTITY, (1, 0): qz(90), (2, 3): qx(-30)},
           positions={(0, 1): (0, 10, 0), (2, 1): (0, 10, 0)},
           check=lambda c: c.channels[1] == ())),
    ("one_channel_joint", chest("Zrotation", ["30", "60", "-90"]),
     Loads(rotations={(0, 1): qz(30), (1, 1): qz(60), (2, 1): qz(-90), (2, 3): qx(-30)})),
    # Rx(90) Ry(90) = (cos45, sin45, 0, 0)(cos45, 0, sin45, 0) = (1/2, 1/2, 1/2, 1/2) by hand.
    ("two_channel_joint", chest("Xrotation Yrotation", ["90 90", "0 0", "-90 0"]),
     Loads(rotations={(0, 1): (0.5, 0.5, 0.5, 0.5), (1, 1): IDENTITY, (2, 1): qx(-90), (2, 3): qx(-30)})),
    ("position_channels_replace_a_joint_offset",
     chest("Xposition Yposition Zposition Zrotation Xrotation Yrotation",
           ["7 8 9 0 0 0", "0 0 0 90 0 0", "1 1 1 0 0 0"]),
     Loads(positions={(0, 1): (7, 8, 9), (1, 1): (0, 0, 0), (2, 1): (1, 1, 1)},
           rotations={(1, 1): qz(90), (2, 3): qx(-30)}, offsets={1: (0, 10, 0)})),
    ("missing_position_axis_is_zero", chest("Xposition Zposition", ["4 6", "0 0", "1 2"]),
     Loads(positions={(0, 1): (4, 0, 6), (1, 1): (0, 0, 0), (2, 1): (1, 0, 2)},
           rotations={(0, 1): IDENTITY, (2, 3): qx(-30)})),
    ("rotation_channels_before_position_channels",
     rows(edit(ROOT_CHANNELS, "CHANNELS 6 Zrotation Xrotation Yrotation Xposition Yposition Zposition"),
          "0 0 0 1 2 3 30 0 0 0 0 0 0 0 0", "90 0 0 4 5 6 0 45 0 0 0 0 0 0 0",
          "0 0 90 7 8 9 0 0 0 0 0 0 0 -30 0"),
     Loads(same_as="base")),
    ("frames_zero", cut(FRAME_TIME, edit(FRAMES, "Frames: 0")),
     Loads(frames=0, check=lambda c: c.rotations.shape == (0, 4, 4) and c.positions.shape == (0, 4, 3))),
    ("more_rows_than_frames_loads_all", edit(FRAMES, "Frames: 2"), Loads(frames=3, warns=True)),
    ("frames_zero_with_rows_loads_all", edit(FRAMES, "Frames: 0"), Loads(frames=3, warns=True)),
    ("multiple_roots",
     insert(MOTION, "ROOT Prop\n{\n  OFFSET 1 2 3\n  CHANNELS 1 Yrotation\n}",
            rows(BASE, "1 2 3 0 0 0 30 0 0 0 0 0 0 0 0 10", "4 5 6 90 0 0 0 45 0 0 0 0 0 0 0 20",
                 "7 8 9 0 0 90 0 0 0 0 0 0 0 -30 0 30")),
     Loads(names=("Hips", "Chest", "Head", "LeftLeg", "Prop"), parents=(-1, 0, 1, 0, -1),
           rotations={(1, 4): qy(20), (2, 3): qx(-30)}, positions={(0, 4): (1, 2, 3)})),
    ("skeleton_without_channels", "HIERARCHY\nROOT A\n{\n  OFFSET 1 2 3\n}\nMOTION\nFrames: 2\n"
     "Frame Time: 0.5\n\n\n", Loads(frames=2, fps=2.0, positions={(1, 0): (1, 2, 3)})),
    ("deep_nesting_5000_joints", deep(5000),
     Loads(frames=1, joints=5001, positions={(0, 5000): (0, 1, 0), (0, 0): (1, 2, 3)},
           check=lambda c: c.parents.tolist() == list(range(-1, 5000)) and c.names[-1] == "J4999")),
    ("deep_nesting_with_missing_offset_at_the_bottom", deep(5000, innermost_offset=False),
     Raises(5 + 3 * 4999 + 1, "joint 'J4999' has no OFFSET")),

    # -- real CMU files (02_03 unless named)
    ("real_file", REAL,
     Loads(frames=174, joints=31, fps=120.0, check=lambda c: c.names[:2] == ["Hips", "LHipJoint"])),
    ("real_crlf", REAL.replace(b"\n", b"\r\n"), Loads(frames=174, same_as="02_03")),
    ("real_lone_cr_and_bom", b"\xef\xbb\xbf" + REAL.replace(b"\n", b"\r"),
     Loads(frames=174, same_as="02_03")),
    ("real_131_mixed_endings", REAL_131,
     Loads(frames=994, joints=31, check=lambda c: {"Chest", "Chest2", "lowerback"} <= set(c.names))),
    ("real_extra_row", REAL + REAL.splitlines(keepends=True)[-1], Loads(frames=175, warns=True)),
    ("real_truncated_at_a_row", bcut(REAL, 287), Raises(287, "declares 174 frames but the file holds 100")),
    ("real_truncated_mid_row", bcut(REAL, 287)[:-200], Raises(287, "frame line has")),
    ("real_truncated_hierarchy", bcut(REAL, 100), Raises(100, "file ends inside the HIERARCHY")),
    ("real_nan_in_a_row", btoken(REAL, 237, 10, b"nan"), Raises(237, "'nan' is not a finite number")),
    ("real_nul_in_the_hierarchy", bsplice(REAL, 40, b"\x00"), Raises(40, "binary data (byte 0x00)")),
    ("real_junk_in_a_row", bsplice(REAL, 300, JUNK), Raises(300, "binary data (byte 0x07)")),
    ("real_missing_brace", bedit(REAL, 3, None), Raises(3, "expected '{'")),
    ("real_absurd_frames", bedit(REAL, 186, b"Frames: 99999999999999999999"),
     Raises(361, "declares 99999999999999999999 frames but the file holds 174")),
    ("real_09_01_row_too_long", bedit(REAL_09, 200, REAL_09.splitlines()[199] + b" 0"),
     Raises(200, "has 97 values; the CHANNELS declare 96")),
    ("real_131_bad_offset_among_crlf_lines", bedit(REAL_131, 174, b"OFFSET 0 x 0.504640"),
     Raises(174, f"'x' {NOT_NUMBER}")),
    ("real_131_bad_row_after_crlf_lines", btoken(REAL_131, 200, 5, b"1.2.3"),
     Raises(200, f"'1.2.3' {NOT_NUMBER}")),
]


@functools.cache
def reference(name: str) -> Clip:
    return bvh.loads(BASE) if name == "base" else bvh.load(cmu_path(name))


def check_error(err: BVHError, data: str | bytes, source: str) -> None:
    """What every BVHError owes an animator: the file, a line inside it, one line of text, and
    no chained traceback from inside numpy."""
    assert err.path == source
    assert str(err).startswith(source)
    assert "\n" not in str(err)
    raw = data.encode("utf-8", "surrogatepass") if isinstance(data, str) else data
    n_lines = len(raw.splitlines())  # bytes.splitlines breaks on \r\n, \r and \n, as editors do
    if err.line is not None:
        assert 1 <= err.line <= max(n_lines, 1), f"line {err.line} of a {n_lines}-line file"
        assert str(err).startswith(f"{source}, line {err.line}: ")
    assert err.__cause__ is None and (err.__context__ is None or err.__suppress_context__)
    assert traceback.extract_tb(err.__traceback__)[-1].filename.endswith("bvh.py")


def check_clip(clip: Clip) -> None:
    """A loaded clip is whole: consistent shapes, finite numbers, unit rotations, unique names."""
    T, J = clip.n_frames, clip.n_joints
    assert clip.rotations.shape == (T, J, 4)
    assert clip.positions.shape == (T, J, 3)
    assert clip.offsets.shape == (J, 3) and clip.parents.shape == (J,) and len(clip.channels) == J
    assert clip.end_offsets.shape == (len(clip.end_parents), 3)
    for array in (clip.rotations, clip.positions, clip.offsets, clip.end_offsets):
        assert np.isfinite(array).all()
    assert np.allclose(np.linalg.norm(clip.rotations, axis=-1), 1.0)
    assert math.isfinite(clip.fps) and clip.fps > 0
    assert len(set(clip.names)) == J
    assert all(0 < len(name.encode("utf-8")) <= 63 for name in clip.names)


def test_table_has_the_cases_the_issue_asks_for():
    assert len(CASES) >= 25
    assert len({case_id for case_id, _, _ in CASES}) == len(CASES)


@pytest.mark.parametrize("data, expected", [pytest.param(d, e, id=i) for i, d, e in CASES])
def test_each_case_loads_right_or_names_the_bad_line(data: str | bytes, expected: Raises | Loads):
    if isinstance(expected, Raises):
        with pytest.raises(BVHError) as info:
            bvh.loads(data, source="case.bvh")
        err = info.value
        check_error(err, data, "case.bvh")
        assert err.line == expected.line, str(err)
        assert expected.text in err.reason, str(err)
        return
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        clip = bvh.loads(data, source="case.bvh")
    assert [w.category for w in caught] == ([BVHWarning] if expected.warns else [])
    check_clip(clip)
    assert clip.n_frames == expected.frames
    if expected.joints is not None:
        assert clip.n_joints == expected.joints
    if expected.names is not None:
        assert clip.names == list(expected.names)
    if expected.parents is not None:
        assert clip.parents.tolist() == list(expected.parents)
    if expected.fps is not None:
        assert clip.fps == expected.fps
    for (t, j), q in expected.rotations.items():
        np.testing.assert_allclose(clip.rotations[t, j], q, atol=1e-12, err_msg=f"frame {t} joint {j}")
    for (t, j), p in expected.positions.items():
        np.testing.assert_allclose(clip.positions[t, j], p, atol=1e-12, err_msg=f"frame {t} joint {j}")
    for j, o in expected.offsets.items():
        np.testing.assert_allclose(clip.offsets[j], o, atol=1e-12, err_msg=f"joint {j}")
    if expected.same_as is not None:
        ref = reference(expected.same_as)
        assert clip.names == ref.names and clip.parents.tolist() == ref.parents.tolist()
        assert clip.fps == ref.fps and clip.end_parents.tolist() == ref.end_parents.tolist()
        for a, b in ((clip.rotations, ref.rotations), (clip.positions, ref.positions),
                     (clip.offsets, ref.offsets), (clip.end_offsets, ref.end_offsets)):
            np.testing.assert_array_equal(a, b)
    if expected.check is not None:
        assert expected.check(clip)


# -- behaviours worth a test of their own -------------------------------------------------------


def test_load_names_the_path_in_errors(tmp_path: Path):
    path = tmp_path / "walk cycle.bvh"
    path.write_bytes(token(34, 3, "abc").encode())
    with pytest.raises(BVHError) as info:
        bvh.load(path)
    assert info.value.path == str(path) and info.value.line == 34
    assert str(info.value) == f"{path}, line 34: 'abc' is not a number"


def test_strict_refuses_extra_rows_at_the_first_extra_row():
    text = edit(FRAMES, "Frames: 2")
    with pytest.raises(BVHError) as info:
        bvh.loads(text, strict=True, source="case.bvh")
    assert info.value.line == 35 and "declares 2 frames but the file holds 3" in info.value.reason
    # A blank line before the extra row moves it down one line.
    with pytest.raises(BVHError) as info:
        bvh.loads(insert(35, "", text), strict=True, source="case.bvh")
    assert info.value.line == 36


def test_extra_rows_warning_names_file_and_first_extra_row():
    message = r"^case\.bvh, line 34: Frames: declares 1 frames but the file holds 3; loading all"
    with pytest.warns(BVHWarning, match=message):
        clip = bvh.loads(edit(FRAMES, "Frames: 1"), source="case.bvh")
    assert clip.n_frames == 3


@pytest.mark.parametrize("text, line", [
    pytest.param(edit(FRAMES, "Frames: 99999999999999999999"), 35, id="frames"),
    pytest.param("HIERARCHY\nROOT A\n{\nOFFSET 0 0 0\n}\nMOTION\nFrames: 99999999999999999999\n"
                 "Frame Time: 0.1\n", 8, id="frames_of_a_skeleton_without_channels"),
    pytest.param(edit(CHEST_CHANNELS, "CHANNELS 1000000000 Zrotation Xrotation Yrotation"), 9, id="channels"),
])
def test_absurd_counts_fail_fast_without_allocating(text: str, line: int):
    tracemalloc.start()  # numpy reports its buffers to tracemalloc too
    start = time.perf_counter()
    try:
        with pytest.raises(BVHError) as info:
            bvh.loads(text)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert time.perf_counter() - start < 0.5
    assert peak < 1_000_000, f"peak {peak} bytes"
    assert info.value.line == line


def test_100k_nested_joints_load_without_recursion_or_hang():
    start = time.perf_counter()
    clip = bvh.loads(deep(100_000))
    assert clip.n_joints == 100_001 and clip.parents[-1] == 99_999
    with pytest.raises(BVHError) as info:
        bvh.loads(deep(100_000, close=False))
    assert info.value.line == 5 + 3 * 100_000 and "file ends inside the HIERARCHY" in info.value.reason
    assert time.perf_counter() - start < 10.0


def test_10k_joints_of_one_name_are_numbered_in_linear_time():
    lines = ["HIERARCHY", "ROOT Hips", "{", "OFFSET 0 0 0"]
    lines += ["JOINT Bone\n{\nOFFSET 0 1 0\n}"] * 10_000
    lines += ["}", "MOTION", "Frames: 1", "Frame Time: 0.1", ""]
    start = time.perf_counter()
    clip = bvh.loads("\n".join(lines))
    assert time.perf_counter() - start < 2.0
    assert clip.names[1:4] == ["Bone", "Bone.001", "Bone.002"]
    assert clip.names[-1] == "Bone.9999" and len(set(clip.names)) == 10_001


def test_long_names_sharing_a_stem_are_numbered_in_linear_time_and_as_before():
    # 63-byte names, each twice: every repeat is cut to the same 59-byte stem for its suffix.
    def names(count: int) -> list[str]:
        return [f"{'x' * 59}{k:04d}" for k in range(count) for _ in range(2)]

    def take(raw: list[str]) -> str:
        lines = ["HIERARCHY", "ROOT Hips", "{", "OFFSET 0 0 0"]
        lines += [f"JOINT {n}\n{{\nOFFSET 0 1 0\n}}" for n in raw]
        return "\n".join([*lines, "}", "MOTION", "Frames: 1", "Frame Time: 0.1", ""])

    start = time.perf_counter()
    clip = bvh.loads(take(names(4000)))
    assert time.perf_counter() - start < 2.0
    assert len(set(clip.names)) == clip.n_joints == 8001
    # The lowest free suffix, found the slow way: the same names.
    taken: set[str] = {"Hips"}
    want = ["Hips"]
    for name in names(40):
        k = 1
        while name in taken:
            name = f"{'x' * 59}.{k:03d}"
            k += 1
        taken.add(name)
        want.append(name)
    assert bvh.loads(take(names(40))).names == want


@pytest.mark.parametrize("line", ["Frames:{spaces}3 4", "Frame Time:{spaces}0.1{spaces}x"])
def test_a_stray_token_after_long_spaces_fails_fast(line: str):
    text = ("HIERARCHY\nROOT A\n{\nOFFSET 0 0 0\n}\nMOTION\nFrames: 1\nFrame Time: 0.1\n"
            .replace("Frames: 1" if line.startswith("Frames") else "Frame Time: 0.1",
                     line.format(spaces=" " * 40_000)))
    start = time.perf_counter()
    with pytest.raises(BVHError) as info:
        bvh.loads(text)
    assert time.perf_counter() - start < 0.5
    assert info.value.line == (7 if line.startswith("Frames") else 8)


def test_a_skeleton_without_channels_refuses_values_in_its_frames():
    text = "HIERARCHY\nROOT A\n{\nOFFSET 0 0 0\n}\nMOTION\nFrames: 1\nFrame Time: 0.1\n1 2 3\nhello world\n"
    with pytest.raises(BVHError, match="3 values; the CHANNELS declare 0") as info:
        bvh.loads(text)
    assert info.value.line == 9


def test_a_deep_chain_saves_in_linear_space_and_loads_back():
    clip = bvh.loads(deep(10_000))
    text = bvh.dumps(clip)
    assert len(text) < 3_000_000  # about 200 bytes a joint (tabs per level made 250 MB)
    back = bvh.loads(text)
    assert back.parents.tolist() == clip.parents.tolist()
    np.testing.assert_array_equal(back.offsets, clip.offsets)


# -- fuzz ---------------------------------------------------------------------------------------

FUZZ_SEED = 1234
FUZZ_CASES = 10_000  # stop here, or when the budget is spent
FUZZ_MIN_CASES = 2000
FUZZ_BUDGET_S = 60.0
FUZZ_CASE_LIMIT_S = 1.0
FUZZ_ROWS = 20  # motion rows kept per file, so a case parses in a millisecond or two

_JUNK_BYTES: tuple[bytes, ...] = (
    b"\x00", b"\xff", b"{", b"}", b"-", b".", b"e", b"nan", b"inf", b"\n", b"\r", b"\r\n", b" ", b"\t",
    b"1", b"0", b"#", b"\xef\xbb\xbf", b"\xc3\xa9", b"\xc2\xa0", b"\xe2\x80\xa8", b"\xd9\xa1", b"\x7f",
    b"_", b",")
_NEW_NUMBERS: tuple[bytes, ...] = (
    b"0", b"-0", b"1e308", b"-1e308", b"1e999", b"nan", b"-inf", b"99999999999999999999", b".", b"-",
    b"--5", b"1.2.3", b"0x10", b"1_000", b".5", b"-.5", b"1E+2", b"", b"\xd9\xa1", b"1e-320", b"+7", b"3 4")
_NEW_KEYWORDS: tuple[bytes, ...] = (
    b"HIERARCHY", b"ROOT", b"JOINT", b"End", b"Site", b"End Site", b"OFFSET", b"CHANNELS", b"MOTION",
    b"Frames:", b"Frame Time:", b"{", b"}", b"Xposition", b"Zrotation", b"Wrotation", b"hierarchy",
    b"joint", b"", b"{ }", b"JOINT a {")
_NEW_COUNTS: tuple[bytes, ...] = (
    b"0", b"1", b"2", b"7", b"1000000000", b"99999999999999999999", b"-1", b"abc", b"")
_NUMBER = re.compile(rb"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?")
_KEYWORD = re.compile(rb"HIERARCHY|ROOT|JOINT|End Site|OFFSET|CHANNELS|MOTION|Frames:|Frame Time:|[{}]|"
                      rb"[XYZ](?:position|rotation)")
_COUNT = re.compile(rb"(?:CHANNELS|Frames:)[ \t]*(\d+)")


@functools.cache
def fuzz_sources() -> dict[str, bytes]:
    """Hierarchy + the first FUZZ_ROWS rows (Frames: adjusted) of small real files; whole files too."""
    sources = {}
    for name in ("02_03", "09_01", "131_01"):
        data = cmu_path(name).read_bytes()
        lines = data.splitlines(keepends=True)
        m = next(k for k, line in enumerate(lines) if line.strip() == b"MOTION")
        frames = lines[m + 1]
        assert frames.startswith(b"Frames:")
        lines[m + 1] = b"Frames: %d" % FUZZ_ROWS + frames[len(frames.rstrip(b"\r\n")):]
        sources[name] = b"".join(lines[:m + 3 + FUZZ_ROWS])
        if name != "131_01":
            sources[f"{name} whole"] = data
    return sources


def mutant(seed: int) -> tuple[bytes, str]:
    """One fuzz case: a source and 1-3 mutations, all drawn from `seed` (rerun a failure with it)."""
    rng = random.Random(seed)
    sources = fuzz_sources()
    name = rng.choice(["02_03", "09_01", "131_01"])
    if name != "131_01" and rng.random() < 0.03:
        name += " whole"
    data = sources[name]
    steps = [name]
    for _ in range(rng.choice((1, 1, 1, 2, 2, 3))):
        data, step = mutate(rng, data)
        steps.append(step)
    return data, "; ".join(steps)


def mutate(rng: random.Random, data: bytes) -> tuple[bytes, str]:
    if not data:
        return rng.choice(_JUNK_BYTES), "replace empty input"
    # Half the byte-level edits land in the hierarchy and header, where the parsing is richest.
    header = data.find(b"MOTION")
    end = len(data) if header < 0 or rng.random() < 0.5 else min(len(data), header + 60)
    pos = rng.randrange(end)
    kind = rng.choice(("delete line", "duplicate line", "swap lines", "delete bytes", "insert bytes",
                       "replace bytes", "truncate", "number", "number", "keyword", "keyword", "count",
                       "line break", "spaces"))
    if kind in ("delete line", "duplicate line", "swap lines"):
        lines = data.splitlines(keepends=True)
        a, b = rng.randrange(len(lines)), rng.randrange(len(lines))
        if kind == "delete line":
            del lines[a]
        elif kind == "duplicate line":
            lines.insert(a, lines[a])
        else:
            lines[a], lines[b] = lines[b], lines[a]
        return b"".join(lines), f"{kind} {a + 1} {b + 1}"
    if kind == "delete bytes":
        n = rng.randint(1, 8)
        return data[:pos] + data[pos + n:], f"delete {n} bytes at {pos}"
    if kind in ("insert bytes", "replace bytes"):
        junk = rng.choice(_JUNK_BYTES) if rng.random() < 0.8 else rng.randbytes(rng.randint(1, 6))
        n = 0 if kind == "insert bytes" else rng.randint(1, 4)
        return data[:pos] + junk + data[pos + n:], f"{kind} {junk!r} at {pos} over {n}"
    if kind == "truncate":
        return data[:pos], f"truncate at {pos}"
    if kind in ("line break", "spaces"):
        # Harmless edits, so that a fair share of mutants still load and get their arrays checked.
        m = re.compile(rb"\r?\n" if kind == "line break" else rb"[ \t]+").search(data, pos)
        if m:
            breaks = (b"\r\n", b"\r", b"\n\n", b"\n \t\n")
            new = rng.choice(breaks if kind == "line break" else (b"\t", b"  \t "))
            return data[:m.start()] + new + data[m.end():], f"{kind} at {m.start()} -> {new!r}"
    if kind == "count":
        counts = list(_COUNT.finditer(data))
        if counts:
            m = rng.choice(counts)
            new = rng.choice((*_NEW_COUNTS, b"%d" % (int(m.group(1)) + rng.choice((-1, 1)))))
            return data[:m.start(1)] + new + data[m.end(1):], f"count at {m.start(1)} -> {new!r}"
    if kind == "number":
        m = _NUMBER.search(data, pos) or _NUMBER.search(data)
        choices = _NEW_NUMBERS
    else:
        keywords = list(_KEYWORD.finditer(data, 0, header + 40 if header >= 0 else len(data)))
        m = rng.choice(keywords) if keywords else None
        choices = _NEW_KEYWORDS
    if m is None:
        return data[:pos], f"truncate at {pos}"
    new = rng.choice(choices)
    return data[:m.start()] + new + data[m.end():], f"{kind} {m.group()!r} at {m.start()} -> {new!r}"


def test_fuzzed_real_files_raise_nothing_but_bvherror():
    master = random.Random(FUZZ_SEED)
    start = time.perf_counter()
    ran = loaded = 0
    while ran < FUZZ_CASES and time.perf_counter() - start < FUZZ_BUDGET_S:
        seed = master.getrandbits(32)
        data, steps = mutant(seed)
        where = f"fuzz case {ran}, mutant({seed}) = {steps}"
        began = time.perf_counter()
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("error")  # a numpy RuntimeWarning is a bug too
                warnings.simplefilter("ignore", BVHWarning)
                clip = bvh.loads(data, source="fuzz.bvh")
            check_clip(clip)
            loaded += 1
        except BVHError as err:
            try:
                check_error(err, data, "fuzz.bvh")
            except AssertionError as bad:
                pytest.fail(f"{where}: {err}: {bad}")
        except Exception:
            pytest.fail(f"{where}: {traceback.format_exc()}")
        took = time.perf_counter() - began
        if took > FUZZ_CASE_LIMIT_S:
            pytest.fail(f"{where}: took {took:.2f} s")
        ran += 1
    assert ran >= FUZZ_MIN_CASES, f"only {ran} cases in {FUZZ_BUDGET_S} s"
    # Both outcomes must be common, or the mutations test only one side of the parser.
    assert 0.05 * ran < loaded < 0.95 * ran, f"{loaded} of {ran} loaded"


def test_messages_stay_short_and_printable():
    with pytest.raises(BVHError) as info:
        bvh.loads("HIERARCHY\nROOT A\n{\n" + "X" * 1_000_000 + " 1 2 3\n}\n")
    assert info.value.line == 4 and len(str(info.value)) < 400
    with pytest.raises(BVHError) as info:
        bvh.loads("HIERARCHY\n", source="take_\udcff.bvh")  # os.fsdecode of a Latin-1 name
    str(info.value).encode("utf-8")  # prints without UnicodeEncodeError
    assert "take_" in str(info.value)
