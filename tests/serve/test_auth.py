"""The token: made 0600 once and kept, taken from the environment, refused when others can read
it; every /v1 route but health refuses a missing or wrong one (401, logged), compared in
constant time."""

from __future__ import annotations

import os
import stat

import pytest

from hpcds1mpi.errors import ConfigError
from hpcds1mpi.serve import auth

PROTECTED = [("GET", "/v1/models"), ("GET", "/v1/schema"), ("POST", "/v1/recommend"),
             ("POST", "/v1/predict")]


def test_token_file_is_made_0600_once_and_kept(tmp_path, monkeypatch):
    monkeypatch.delenv(auth.TOKEN_ENV, raising=False)
    where = auth.state_dir(tmp_path / "state")
    assert stat.S_IMODE(os.stat(where).st_mode) == 0o700
    token, source = auth.load_token(where)
    path = where / auth.TOKEN_FILE
    assert source == str(path) and len(token) >= 40
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    assert auth.load_token(where)[0] == token  # a restart keeps the token


def test_token_file_readable_by_others_is_refused(tmp_path, monkeypatch):
    monkeypatch.delenv(auth.TOKEN_ENV, raising=False)
    where = auth.state_dir(tmp_path)
    auth.load_token(where)
    os.chmod(where / auth.TOKEN_FILE, 0o644)
    with pytest.raises(ConfigError, match="readable by others"):
        auth.load_token(where)


def test_environment_token_wins_and_must_be_long(tmp_path, monkeypatch):
    monkeypatch.setenv(auth.TOKEN_ENV, "x" * 20)
    assert auth.load_token(tmp_path) == ("x" * 20, auth.TOKEN_ENV)
    assert not (tmp_path / auth.TOKEN_FILE).exists()  # nothing written
    monkeypatch.setenv(auth.TOKEN_ENV, "short")
    with pytest.raises(ConfigError, match="at least 16"):
        auth.load_token(tmp_path)


@pytest.mark.parametrize("header,why", [
    (None, "no Authorization header"), ("", "no Authorization header"),
    ("Basic abc", "not 'Bearer"), ("Bearer ", "not 'Bearer"),
    ("Bearer wrong-token-of-some-length", "wrong token"),
    ("Bearer right-token-0123456789x", "wrong token"),  # a longer one with the right prefix
    ("Bearer \udcff\udcfe", "wrong token"),  # undecodable bytes do not raise
])
def test_refusal_reasons(header, why):
    assert why in auth.refusal(header, "right-token-0123456789")


def test_refusal_accepts_the_token():
    assert auth.refusal("Bearer right-token-0123456789", "right-token-0123456789") is None
    assert auth.refusal("bearer right-token-0123456789", "right-token-0123456789") is None


def test_server_token_file_is_0600(server):
    assert stat.S_IMODE(os.stat(server.state / "token").st_mode) == 0o600


@pytest.mark.parametrize("method,path", PROTECTED)
@pytest.mark.parametrize("token", [None, "wrong-token-wrong-token", ""])
def test_no_or_wrong_token_is_401_and_logged(server, method, path, token):
    body = {"workload": "stencil", "size": 128} if method == "POST" else None
    status, data, headers = server.request(method, path, body, token=token)
    assert status == 401, data
    assert headers.get("www-authenticate", "").startswith("Bearer")
    assert "token" in data["error"] or "Bearer" in data["error"]
    assert f"refused {method} {path} from 127.0.0.1: 401" in server.log()


def test_health_needs_no_token_and_says_nothing_else(server):
    status, data, _ = server.request("GET", "/v1/health", token=None)
    assert status == 200 and data == {"status": "ok"}


def test_the_right_token_is_accepted(server):
    status, data, _ = server.request("GET", "/v1/models")
    assert status == 200 and "stencil" in data["workloads"]


def test_token_never_logged(server):
    server.request("GET", "/v1/models", token="wrong-token-wrong-token")
    log = server.log()
    assert server.token not in log and "wrong-token-wrong-token" not in log


@pytest.mark.parametrize("mode", [0o755, 0o750, 0o701, 0o777], ids=lambda m: f"{m:o}")
def test_an_existing_state_dir_open_to_others_is_refused_and_left_as_it_is(tmp_path, mode):
    """The README says the state directory is made 0700; an existing one (mkdir -p: 0755) was
    used as it was. Its mode is not changed (it may be one the user shares, or /tmp): the
    start is refused in one line that says what to do."""
    from hpcds1mpi.errors import OutputError

    where = tmp_path / "my state"
    where.mkdir()
    os.chmod(where, mode)
    with pytest.raises(OutputError) as info:
        auth.state_dir(where)
    assert str(info.value) == (f"{where} is open to others (mode {mode:o}) and the server "
                               f"keeps its token there: chmod 700 '{where}', or pass a new "
                               "--state-dir")
    assert stat.S_IMODE(os.stat(where).st_mode) == mode and not any(where.iterdir())
    os.chmod(where, 0o700)
    assert auth.state_dir(where) == where


def test_a_state_dir_made_here_is_0700_whatever_the_umask(tmp_path):
    old = os.umask(0o277)  # would leave the owner without write and search
    try:
        where = auth.state_dir(tmp_path / "state")
    finally:
        os.umask(old)
    assert stat.S_IMODE(os.stat(where).st_mode) == 0o700


def test_serve_refuses_a_state_dir_others_can_read_in_one_line(tmp_path):
    from tests.helpers import run_cli

    where = tmp_path / "st"
    where.mkdir()
    os.chmod(where, 0o755)
    proc = run_cli(["serve", "--port", "0", "--state-dir", str(where)], timeout=60,
                   env={auth.TOKEN_ENV: ""})
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines() == [
        f"hpcds1mpi: error: {where} is open to others (mode 755) and the server keeps its "
        f"token there: chmod 700 {where}, or pass a new --state-dir"]
    assert not (where / auth.TOKEN_FILE).exists()


def test_a_token_file_on_a_full_disk_is_one_line_and_not_left_empty(small_disk, monkeypatch):
    """s32 tester T2: the token file was created, its write then failed on a full disk (an
    OSError traceback) and the empty file refused every later start; now it is removed and
    the disk-full line (exit 1) says what to do."""
    from hpcds1mpi.errors import WriteError
    from tests.helpers import fill_disk

    monkeypatch.delenv(auth.TOKEN_ENV, raising=False)
    state = auth.state_dir(small_disk / "state")
    fill_disk(small_disk, leave=0)
    with pytest.raises(WriteError, match=r"the disk is full \(No space left on device\); free "
                                         r"some space and rerun, or pass --state-dir"):
        auth.load_token(state)
    assert not (state / auth.TOKEN_FILE).exists()
