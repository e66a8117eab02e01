"""MPI start-up, buffers, thread pools and compiled loops: what every stage runs on."""
