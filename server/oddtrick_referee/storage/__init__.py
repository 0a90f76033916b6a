"""What the referee keeps on disk: the match index and competition results."""
