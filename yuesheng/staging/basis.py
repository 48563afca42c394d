"""How an action's basis begins (``StagedCue.basis``, carried to ``CueTiming.basis``) when it keeps the cue sheet's
estimate: apart from ``rite``, so that a reader of a basis (the director's page) need not import the staging model."""

NOTHING_TO_TIME = "nothing on the ground to time it (no walk, no formula)"
KEPT = "estimate: "  # how the basis of an action that keeps the cue sheet's estimate begins, before the reason
