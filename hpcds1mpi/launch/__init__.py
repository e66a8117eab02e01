"""Launchers and the program rule: launch lines, environment, batch scripts."""
