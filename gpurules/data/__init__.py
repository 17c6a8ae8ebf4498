"""Feature representations built once per fit: pre-sorted columns (and, later, bins)."""
