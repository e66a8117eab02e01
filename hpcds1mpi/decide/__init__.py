"""Deciding: System 1, the familiarity guard, recommend, System 2's search."""
