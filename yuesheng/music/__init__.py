"""The music: 律呂 (``lulu``), a piece from 瑟譜 (``score``), the shipped pieces (``repertoire``), and the
instruments' parts with their playing patterns (``instruments``). Below the cue sheet; above the base."""
