"""What goes wrong, as users are told it: the errors a job raises with a message for the user, the
warnings a read gives, and the core's warnings and errors in the user's words (wording.py's, with
what each command offers instead); no bpy here."""

from __future__ import annotations

import warnings
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any

from . import wording
from .core import bvh
from .options import choice_values
from .wording import UI, Face


class BridgeError(ValueError):
    """An armature or action that cannot be read or written (message for the user)."""


class BridgeWarning(UserWarning):
    """What a user should hear about a read: the action's rate and the scene's differ, or actions of
    other skeletons combined because the user allowed it. Operators report it as a WARNING."""


class JobError(ValueError):
    """A user-facing failure: the message says what is wrong and what to do."""


USER_ERRORS = (JobError, BridgeError, bvh.BVHError, ValueError, OSError)


def chosen(options: Any, name: str, face: Face = UI) -> str:
    """Option `name` of `options` (an instance of an options class) in upper case, one of its field's
    choices (`options.choice_values`); JobError naming the option as the user of `face` calls it."""
    cls, value = type(options), getattr(options, name)
    values = choice_values(cls, name)
    if value.upper() not in values:
        raise JobError(f"{face.called(cls, name)} must be one of {', '.join(values)}, not {value!r}")
    return str(value.upper())


# Core warnings name the core's keywords; a command tells the user its own option instead, or
# nothing where it has no such option (a transition's feet lock without Lower Pelvis). Everything
# else about the core's words is wording.in_user_words's (the one place; see there).
LOWER_PELVIS_HINT = ". lower_pelvis=True lowers the pelvis instead"
NO_CORE_WORDS = {LOWER_PELVIS_HINT: ""}


def in_user_words(message: str, words: Mapping[str, str] = NO_CORE_WORDS, face: Face = UI) -> str:
    """A core message as the user of `face` reads it (wording.in_user_words: UI, Blender's
    panels; CLI, flags), each phrase of `words` first replaced by what the command offers."""
    return wording.in_user_words(message, words, face)


@contextmanager
def core_warnings(words: Mapping[str, str] = NO_CORE_WORDS, face: Face = UI) -> Iterator[list[str]]:
    """The warnings the core raises inside the block (EventWarning, ContactWarning, FootLockWarning,
    BodyWarning, ...: every UserWarning), as messages in user words (`face`'s), each once, in the
    list yielded (filled when the block ends, even by an error), for an operator's report or the
    CLI's stderr. Other warnings are shown as usual."""
    messages: list[str] = []
    caught: list[warnings.WarningMessage] = []
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", UserWarning)
            yield messages
    finally:
        for w in caught:
            if issubclass(w.category, UserWarning):
                text = in_user_words(str(w.message), words, face)
                if text not in messages:
                    messages.append(text)
            else:
                warnings.showwarning(w.message, w.category, w.filename, w.lineno)
