"""Stored data: the HDF5 telemetry, job-log ingestion, the training-data container."""
