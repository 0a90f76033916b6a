"""`oddtrick conformance`: plays a bot through scripted matches that probe it, and reports.

A real referee referees; a probing proxy between it and the bot records every
message and changes some on purpose (see :mod:`.proxy` and :mod:`.scenarios`);
:mod:`.checks` judges what the bot did; :mod:`.report` prints it.
"""

from oddtrick_referee.conformance.report import Check, Report
from oddtrick_referee.conformance.runner import Options, run_conformance

__all__ = ["Check", "Options", "Report", "run_conformance"]
