"""Text in, text out: FIBS/CLIP lines, ``board:`` strings and ASCII boards, with no I/O."""
