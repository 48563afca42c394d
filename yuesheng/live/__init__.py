"""The rite in real time: the player that sends the Timeline to a MIDI port (``player``), the one guard every
GO passes (``control``), and rehearsal logs turned into measured durations (``rehearsal``)."""
