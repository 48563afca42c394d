"""The rite in real time: the operator's commands in one table (``commands``), the cueing state machine
(``cueing``) and the pump that sends its messages to a MIDI port (``player``), the one guard every GO passes
(``control``), and rehearsal logs turned into measured durations (``rehearsal``)."""
