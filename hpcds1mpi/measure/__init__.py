"""Measuring: sweep plans, running kernels and programs, meters, the sweep driver."""
