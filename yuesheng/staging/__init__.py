"""The 儀禮圖 layer: halls and their places, the blocking of each cue, routes through the hall and the durations
they give (between the cue sheet and the timeline; docs/staging.md).

Its modules are imported by name (``yuesheng.staging.rite``, ``.model``, ``.routes`` …), and only by a rite that has a
blocking: ``paths`` finds the files without importing the rest, so a build of a rite without one pays nothing.
"""
