"""MPI start-up, buffers, thread pools, compiled loops and quiet third-party imports: what
every stage runs on."""
