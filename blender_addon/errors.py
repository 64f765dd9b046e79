"""What goes wrong, as users are told it: the errors a job raises with a message for the user, and the
warnings it gives (no bpy here)."""

from __future__ import annotations


class BridgeError(ValueError):
    """An armature or action that cannot be read or written (message for the user)."""


class BridgeWarning(UserWarning):
    """What a user should hear about a read: the action's rate and the scene's differ, or actions of
    other skeletons combined because the user allowed it. Operators report it as a WARNING."""
