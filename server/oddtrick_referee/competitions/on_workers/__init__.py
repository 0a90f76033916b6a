"""A tournament or SPRT played by workers on other machines: queueing its sets, following
them, and the results they return.
"""
