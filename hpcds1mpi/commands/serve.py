"""``hpcds1mpi serve``: recommendations over HTTP, with a token, optional TLS and a web console."""

from __future__ import annotations

import click

from hpcds1mpi.schemas.numbers import BoundedFloat, BoundedInt
from hpcds1mpi.schemas.paths import BUNDLE_IS_CODE, NonEmptyPath


@click.command(name="serve")
@click.option("--host", default="127.0.0.1", show_default=True,
              help="Address to listen on (a non-loopback one needs TLS or --allow-plain-http).")
@click.option("--port", type=BoundedInt(0, 65535, "TCP port"), default=8787, show_default=True,
              help="TCP port (0: any free port, printed).")
@click.option("--model", "model_dir", type=NonEmptyPath(), default=None,
              help="Model bundle directory (default: the bundle shipped with the package). "
                   + BUNDLE_IS_CODE)
@click.option("--cluster", "cluster_file", type=NonEmptyPath(), default=None,
              help="Cluster TOML file whose partitions requests may name (default: this Slurm "
                   "allocation or this machine).")
@click.option("--state-dir", type=NonEmptyPath(), default=None,
              help="Where the token and caches live, the only place written "
                   "(default: ~/.local/state/hpcds1mpi/serve).")
@click.option("--certfile", type=NonEmptyPath(), default=None, help="TLS certificate (PEM).")
@click.option("--keyfile", type=NonEmptyPath(), default=None, help="TLS private key (PEM).")
@click.option("--allow-plain-http", is_flag=True,
              help="Allow a non-loopback --host without TLS (behind a TLS-terminating proxy).")
@click.option("--max-body", type=BoundedInt(1024, 16 * 1024 * 1024, "size in bytes"),
              default=256 * 1024, show_default=True, help="Largest request body, bytes.")
@click.option("--max-pending", type=BoundedInt(1, 100_000, "request count"), default=64,
              show_default=True, help="Requests computing or waiting at once; more get 503.")
@click.option("--body-timeout", type=BoundedFloat(0.1, 3600, "time in seconds"), default=30.0,
              show_default=True, help="Seconds a client has to send its request head once begun, "
                   "and then its body (408 after).")
@click.option("--cache", "cache_size", type=BoundedInt(0, 1_000_000, "answer count"),
              default=1024, show_default=True, help="Answers remembered for repeated questions.")
@click.option("--workers", type=BoundedInt(0, 64, "process count"), default=1,
              show_default=True,
              help="Processes computing new answers, each with its own copy of the bundle, "
                   "beside the process serving HTTP (0: a thread of that process instead: "
                   "less memory, but HTTP and computing then share one core).")
def command(host, port, model_dir, cluster_file, state_dir, certfile, keyfile,
            allow_plain_http, max_body, max_pending, body_timeout, cache_size, workers):
    """Serve recommendations over HTTP (token, TLS) with a web console.

    Every /v1 call but /v1/health needs 'Authorization: Bearer TOKEN'; the token is
    HPCDS1MPI_SERVE_TOKEN, else the file 'token' in the state directory (made 0600 on first
    start). The console is at the printed URL; it asks for the token.
    """
    import os

    from hpcds1mpi.serve import auth, server

    tls = server.check_tls(certfile, keyfile)
    server.check_host(host, tls, allow_plain_http)
    state = auth.state_dir(state_dir)
    # Caches the decide layer writes (the guard's calibration for a bundle without one, numba's
    # compiled loops) go to the state directory, the only place this process writes.
    os.environ["HPCDS1MPI_CACHE"] = str(state / "cache")
    os.environ["NUMBA_CACHE_DIR"] = str(state / "numba")
    sock = server.bind(host, port)  # before the bundle: a taken port costs no loading time
    pool = None
    try:
        from hpcds1mpi.serve.app import create_app
        from hpcds1mpi.serve.service import Service

        service = Service(model_dir, cluster_file, state, cache_size=cache_size)
        service.warm_up(computes=workers == 0)  # with workers, they compute (and warm up)
        if workers >= 1:
            from hpcds1mpi.serve.workers import Workers

            pool = Workers(workers, model_dir, cluster_file, state)
        server.settle_heap()  # last thing before serving: the loaded bundle is never garbage
        token, source = auth.load_token(state)  # after the checks: a refused start writes none
        app = create_app(service, token, max_body=max_body, max_pending=max_pending,
                         body_timeout=body_timeout, workers=pool)
        server.configure_logging()
        places = ", ".join(f"{c.name}/{p.name}" for c, p in service.places)
        click.echo(f"hpcds1mpi serve: model {service.model_dir.name}; partitions {places}"
                   + (f"; {workers} worker process{'es' if workers > 1 else ''}" if pool
                      else "; computing in a thread of this process"))
        click.echo(f"hpcds1mpi serve: token from {source}")
        click.echo(f"hpcds1mpi serve: listening on {server.url(sock, host, tls)}", nl=True)
        from hpcds1mpi.runtime.unstoppable_output import raise_if_lost

        raise_if_lost("stdout")  # a server nobody can find is not started (s32 review)
        server.run(app, sock, certfile=certfile, keyfile=keyfile, head_timeout=body_timeout)
        click.echo("hpcds1mpi serve: stopped")
    except OSError as exc:  # numba's cache, written while the bundle warms up, or the token
        from hpcds1mpi.cli import _on_stdout

        # a full stdout is not the state folder's (s32 review): cli.main says that one
        full = None if _on_stdout(exc) else auth.disk_full(exc, state)
        if full is None:
            raise
        raise full from None
    finally:
        if pool is not None:
            pool.close()
        sock.close()
