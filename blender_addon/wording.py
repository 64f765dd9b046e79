"""Messages in the user's words: the one place core errors and warnings become what Blender (or the
CLI) shows.

The core speaks to Python users: it names keyword arguments ("pass feet={'L': left_ankle, ...}",
"lower_pelvis=True lowers the pelvis instead"), its parameters (`blend_time`) and maths
("2 dt = 0.0167 s"). Every text an operator reports, a poll refuses with or a panel shows passes
through `in_user_words(text)` (the UI face), and what the CLI prints through it with `face=CLI`:

- a clause or parenthesis with Python in it (`=`, braces, backquotes, a call, the word Python) is
  left out, and the advice it gave becomes the face's: `feet=` -> the Rig panel's Left Foot and
  Right Foot (`--feet` on the CLI), `lower_pelvis=` -> Lower Pelvis, any option's name -> its
  label (flag);
- the core's parameter names (snake_case) become the options' labels; `>=` and `<=` become words;
- quoted names (an action, a bone) and file paths are never touched.

A message a branch adds to the core later gets the same treatment; a new kind of advice is one more
line in `UI_FIXES` / `CLI_FIXES`. No bpy here.
"""

from __future__ import annotations

import dataclasses
import functools
import importlib
import inspect
import re
from collections.abc import Mapping
from typing import NamedTuple

from . import options


class Fix(NamedTuple):
    """What to do, for a user of one face, instead of passing a core keyword argument."""

    says: str  # the advice, as the message then ends with it
    said: str  # lowercase words that show a message already gives that advice


class Face(NamedTuple):
    """How a user reaches the options: the advice per core keyword, and the names they know."""

    fixes: Mapping[str, Fix]  # core keyword -> advice
    names: Mapping[str, str]  # core or option name with an underscore -> label or flag
    by: str = "label"  # what this user calls an option by: its label (Blender) or its flag (the CLI)

    def called(self, cls: type, name: str) -> str:
        """What this user calls `cls`'s option `name` (options.called: its label, or its flag)."""
        return options.called(cls, name, self.by)


def _option_names(key: str) -> dict[str, str]:
    """{field name with an underscore: its label (key 'label') or CLI flag (key 'flag')}, first
    declaration first, over every options class."""
    out: dict[str, str] = {}
    for cls in options.OPTIONS:
        for f in dataclasses.fields(cls):
            if "_" in f.name and f.metadata.get(key):
                out.setdefault(f.name, str(f.metadata[key]))
    return out


# The core's own names for what the options call otherwise (transition.dead_blend's src_time, ...).
UI_NAMES = {**_option_names("label"), "speed_mps": "Foot Speed", "src_time": "Source Time",
            "dst_time": "Target Time", "min_duration": "the shortest contact"}
CLI_NAMES = {**_option_names("flag"), "speed_mps": "--speed", "src_time": "--at", "dst_time": "--dst-at"}

FEET = Fix("choose the feet in the Rig panel (Left Foot, Right Foot)", "rig panel")
UI_FIXES = {
    "feet": FEET,
    "lower_pelvis": Fix("turn on Lower Pelvis (Lock Feet) to lower the hips instead", "lower pelvis"),
    "frames": Fix("give the cycle's frames (A Frames, B Frames)", "a frames"),
}
CLI_FIXES = {
    "feet": Fix("give the ankles with --feet LEFT,RIGHT", "--feet"),
    "lower_pelvis": Fix("add --lower-pelvis to lower the hips instead", "--lower-pelvis"),
    "frames": Fix("give the cycles' frames (--frames-a, --frames-b)", "--frames"),
}
UI = Face(UI_FIXES, UI_NAMES)
CLI = Face(CLI_FIXES, CLI_NAMES, "flag")

# Core phrases whose maths or code has plain words (applied first, to every face).
PHRASES = (
    (re.compile(r"for less than 4 sigma \+ dt = "), "for less than "),
    (re.compile(r"tolerance must be >= 0 and below window - \|lead\| = (\S+) s \(the highest d_hat - lead "
                r"reaches\)"), r"tolerance must be below \1 s (the Window less the lead)"),
    # A path's turn (core.path): the lateral acceleration it asks, without the equation.
    (re.compile(r"asks v\^2/R = (\S+) m/s\^2"), r"asks \1 m/s^2 sideways (v^2/R)"),
    (re.compile(r" >= "), " at least "),
    (re.compile(r" <= "), " at most "),
    (re.compile(r"use 'linear' or 'harmonic'"), "use a Linear or Harmonic cycle length"),
    # The core's names of the clips it makes: a sync blend's cycles, a transition's two sides.
    (re.compile(r"\b(\S+?)\.cycle\+(\S+?)\.cycle\b"), r"the blend of \1 and \2"),
    (re.compile(r"\b(\S+?)\.cycle\b"), r"\1's cycle"),
    (re.compile(r"^(\S*)>(\S+) \(times from"), r"the transition \1 > \2 (times from"),
    (re.compile(r"^the transition  > "), "the transition into "),
)

# Quoted names (reprs: 'walk', "Bob's walk") open after a non-word character, so that the
# apostrophe of "panel's" is no quote.
_QUOTED = re.compile(r"(?<!\w)'[^']*'(?!\w)|(?<!\w)\"[^\"]*\"(?!\w)")
# File paths are the user's names too (a BVH error starts with its file, unquoted).
_PATH = re.compile(r"(?<!\S)[^\s,;]*[/\\][^\s,;]*|(?<!\S)[^\s,;]+\.(?:bvh|blend)\b", re.IGNORECASE)
_CODE = re.compile(r"=|[{}`]|\w\(\)|[a-z]_\w*\(|\.\w+\(|\bPython\b")
_KEYWORD = re.compile(r"\b([a-z_][a-z0-9_]*)\s*=")
_SNAKE = re.compile(r"\b[a-z][a-z0-9]*(?:_[a-z0-9]+)+\b")
_OPEN, _CLOSE = "([{", ")]}"


def _masked(text: str) -> str:
    """`text` with its quoted names blanked (same length), so that nothing inside them counts."""
    blank = _QUOTED.sub(lambda m: "x" * len(m.group()), text)
    return _PATH.sub(lambda m: "x" * len(m.group()), blank)


@functools.cache
def code_names() -> frozenset[str]:
    """The core's public functions and their parameters with an underscore in their names: in a
    message they are code, not words."""
    found: set[str] = set()
    for module in ("blend", "body", "contacts", "events", "footlock", "ik", "matching", "nla", "resample",
                   "root", "sync", "transition"):
        mod = importlib.import_module(f"{__package__}.core.{module}")
        for name, fn in vars(mod).items():
            if name.startswith("_") or not inspect.isfunction(fn) or fn.__module__ != mod.__name__:
                continue
            found |= {p for p in (name, *inspect.signature(fn).parameters) if "_" in p}
    return frozenset(found)


def _split(text: str) -> list[tuple[str, str]]:
    """[(clause, the separator after it)]: `text` cut at '; ', ', ' and '. ' outside brackets and
    quoted names (not after 'e.g' or 'i.e')."""
    masked = _masked(text)
    out: list[tuple[str, str]] = []
    depth, start, i = 0, 0, 0
    while i < len(text):
        c = masked[i]
        if c in _OPEN:
            depth += 1
        elif c in _CLOSE:
            depth = max(0, depth - 1)
        elif depth == 0 and masked[i:i + 2] in ("; ", ", ", ". ") and \
                not (c == "." and masked[max(0, i - 3):i] in ("e.g", "i.e")):
            out.append((text[start:i], masked[i:i + 2]))
            start = i = i + 2
            continue
        i += 1
    out.append((text[start:], ""))
    return out


def _groups(clause: str, face: Face, wanted: set[str]) -> str:
    """`clause` with each parenthesis at its top level in user words (`_clauses`), or left out
    when nothing of it is."""
    masked = _masked(clause)
    out, depth, start, last = [], 0, -1, 0
    for i, c in enumerate(masked):
        if c == "(":
            if depth == 0:
                start = i
            depth += 1
        elif c == ")" and depth:
            depth -= 1
            if depth == 0:
                inner = _clauses(clause[start + 1:i], face, wanted)
                head = clause[last:start]
                out.append(f"{head}({inner})" if inner else head.rstrip(" "))
                last = i + 1
    out.append(clause[last:])
    return "".join(out)


def _is_code(clause: str) -> bool:
    masked = _masked(clause)
    if _CODE.search(masked):
        return True
    words = masked.strip(" .;,:")
    return bool(words) and all(w in code_names() for w in re.split(r"[\s,]+", words))


def _clauses(text: str, face: Face, wanted: set[str]) -> str:
    """`text` without its clauses of code; the keywords they named are added to `wanted`."""
    kept: list[tuple[str, str]] = []
    dropped = False
    for clause, sep in _split(text):
        clause = _groups(clause, face, wanted)
        if _is_code(clause) or (dropped and clause.lstrip().startswith("e.g.")):
            wanted.update(_KEYWORD.findall(_masked(clause)))
            dropped = True
            continue
        dropped = False
        kept.append((clause, sep))
    if not kept:
        return ""
    return "".join(c + s for c, s in kept[:-1]) + kept[-1][0]


def _fix(keyword: str, face: Face) -> Fix | None:
    if keyword in face.fixes:
        return face.fixes[keyword]
    name = face.names.get(keyword)
    return Fix(f"set {name}", name.lower()) if name else None


def in_user_words(message: str, words: Mapping[str, str] | None = None, face: Face = UI) -> str:
    """`message` as the user of `face` (UI: Blender's panels; CLI: flags) reads it: each phrase of
    `words` (a command's own: the core's phrase -> what that command offers instead) replaced,
    the core's maths in words, clauses of Python left out and their advice given as the face
    gives it, code names as labels. Texts already in user words come back unchanged."""
    for core, user in (words or {}).items():
        message = message.replace(core, user)
    for pattern, plain in PHRASES:
        message = pattern.sub(plain, message)
    wanted: set[str] = set()
    text = _clauses(message, face, wanted)
    text = _SNAKE.sub(lambda m: face.names.get(m.group(), m.group())
                      if not _inside_quotes(text, m.start()) else m.group(), text)
    for keyword in sorted(wanted):
        fix = _fix(keyword, face)
        if fix is not None and fix.said not in text.lower():
            text = f"{text.rstrip(' .;,:')}; {fix.says}" if text.strip() else fix.says
    return re.sub(r"  +", " ", text).strip()


def _inside_quotes(text: str, at: int) -> bool:
    return any(m.start() <= at < m.end() for m in _QUOTED.finditer(text))
