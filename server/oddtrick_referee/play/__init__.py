"""One match at one table: the seats' requests and deadlines, and the match log."""
