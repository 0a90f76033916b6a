"""oddtrick: write bots that play classic Whist and Contract Whist.

The rules live in :mod:`oddtrick.rules`.
"""

__version__ = "0.1.0"
