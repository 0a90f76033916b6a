"""From logs to standings: a table's result scored from its log, the standings and their
intervals, the publication rule, the double-dummy skill.
"""
