"""Competitions built on matches: tournaments, their standings, the demo."""
