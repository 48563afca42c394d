"""The checks a cue sheet must pass beyond reading: quotes on their pages, the ritual rules (``rules``), the
limits of a build; ``validate`` composes them. Above the timeline (it measures builds); below the outputs."""
