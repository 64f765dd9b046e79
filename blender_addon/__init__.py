"""Stride: motion-capture locomotion tools for Blender.

The core (maths, BVH, events, blends, transitions) is bundled as the `core` subpackage and imported
relatively; this package only holds the Blender layer: the action bridge, operators, panels and
the `stride` CLI command. bpy is imported when the add-on registers, not here: the modules that need
no bpy (options, wording, errors, timing, recipes, arguments) import in any Python, where tests/core
runs them.
"""

from __future__ import annotations

from typing import Any

_cli_handle: Any = None


def _classes() -> tuple[Any, ...]:
    """The classes Blender registers, in order: properties before the operators and panels using them."""
    from . import gait_operators, operators, panels, properties, rig

    return (*properties.CLASSES, *operators.CLASSES, *gait_operators.CLASSES, *panels.LISTS, *panels.CLASSES,
            *rig.CLASSES)


def register() -> None:
    import bpy

    from . import cli, operators, properties, rig

    for cls in _classes():
        bpy.utils.register_class(cls)
    properties.register()
    rig.register()
    operators.register_menus()
    global _cli_handle
    _cli_handle = bpy.utils.register_cli_command("stride", cli.main)


def unregister() -> None:
    import bpy

    from . import operators, properties, rig

    global _cli_handle
    if _cli_handle is not None:
        bpy.utils.unregister_cli_command(_cli_handle)
        _cli_handle = None
    operators.unregister_menus()
    rig.unregister()
    properties.unregister()
    for cls in reversed(_classes()):
        bpy.utils.unregister_class(cls)
