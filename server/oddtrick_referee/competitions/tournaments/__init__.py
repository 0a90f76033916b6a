"""Tournaments: planning the pairings and tables, playing them, resuming, the demo, and the
SPRT run on a tournament.
"""
