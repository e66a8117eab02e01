"""jobscripts."""
