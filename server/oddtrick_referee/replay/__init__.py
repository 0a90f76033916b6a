"""Replaying logged matches: the model of positions, the terminal viewer and PBN export.

A finished match's log holds its configuration, every action and the revealed
seed: :mod:`.model` re-applies the actions through the rules engine and keeps,
hand by hand, what a viewer needs to show any moment of the play. The terminal
viewer (:mod:`.terminal`), the PBN export (:mod:`.pbn`) and the web page
(``oddtrick_referee.web``) all read that one model.
"""
