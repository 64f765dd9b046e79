"""What the Blender layer works out with no bpy: what each job does to clips (its options turned into
core calls, the clips' frames counted as the action's, the errors and doubts in the words of the
user who asked: the sidebar's labels, or the CLI's flags) and the bridge's arithmetic on an action's
numbers. The jobs (jobs/) and the bridge (bridge/) read and write Blender data around these; the
tests in tests/core run them without Blender.

- events.py: footsteps (Detect Footsteps) and locked feet (Lock Feet) of a clip
- transitions.py: a transition between two clips, the target time that best continues the source
- sync.py: a synchronized blend of two cycles, the cycle of a clip, the weight that travels at a speed
- blendspace.py: a blend space of gaits (their loops, speeds and cycles, one skeleton), the target speed
- path.py: Walk Along Path (path files, circles and lines from a take's start, world points in an
  armature's space, a keyed speed per meter of path, the core's warnings with their frames)
- previews.py: what the sidebar shows before a bake
- actions.py: the bridge's numbers (clip space from a world matrix, F-curve paths, key frames, rates)
"""
