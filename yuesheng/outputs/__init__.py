"""Everything made from a Timeline: MIDI (``midi``), audio (``audio``), MusicXML (``musicxml``), engraving
(``engrave``, ``songbook``), run sheets (``report``), labels (``markers``) and the condensed rite (``condense``).
Each reads the Timeline, never the YAML."""
