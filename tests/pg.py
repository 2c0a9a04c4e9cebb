"""A throwaway PostgreSQL cluster for tests: initdb + pg_ctl under a temp dir, loopback only.

`make test` installs Debian's postgresql package when it is missing; the tests never skip the
PostgreSQL runs. As root, the server runs as the `postgres` system user (initdb refuses root).
"""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
import time
from dataclasses import dataclass


def _pg_bin(name: str) -> str | None:
    found = sorted(glob.glob(f"/usr/lib/postgresql/*/bin/{name}"))
    if found:
        return found[-1]
    return shutil.which(name)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass
class PgCluster:
    datadir: str
    port: int
    user: str = "h2h"
    run_as: str | None = None
    pg_ctl: str = ""

    def url(self, dbname: str = "postgres") -> str:
        return f"postgresql+psycopg://{self.user}@127.0.0.1:{self.port}/{dbname}"

    def stop(self) -> None:
        _run(self.run_as, [self.pg_ctl, "-D", self.datadir, "-m", "immediate", "-w", "stop"],
             check=False)
        shutil.rmtree(os.path.dirname(self.datadir), ignore_errors=True)


def _run(run_as: str | None, cmd: list[str], check: bool = True) -> subprocess.CompletedProcess:
    if run_as:
        cmd = ["runuser", "-u", run_as, "--", *cmd]
    return subprocess.run(cmd, check=check, capture_output=True, text=True)


def start_cluster() -> PgCluster:
    initdb, pg_ctl = _pg_bin("initdb"), _pg_bin("pg_ctl")
    if not initdb or not pg_ctl:
        raise RuntimeError("PostgreSQL server binaries (initdb, pg_ctl) not found; `make test` "
                           "installs Debian's postgresql package. Install it and rerun.")
    run_as = None
    base = tempfile.mkdtemp(prefix="h2h-pg-")
    if os.geteuid() == 0:
        try:
            pw = pwd.getpwnam("postgres")
        except KeyError:
            raise RuntimeError("running as root needs the 'postgres' system user, which "
                               "Debian's postgresql package creates") from None
        run_as = "postgres"
        os.chown(base, pw.pw_uid, pw.pw_gid)
        os.chmod(base, 0o755)
    datadir = os.path.join(base, "data")
    _run(run_as, [initdb, "-D", datadir, "-A", "trust", "-U", "h2h", "-E", "UTF8",
                  "--no-sync", "--locale=C"])
    port = _free_port()
    opts = (f"-p {port} -k {base} -c listen_addresses=127.0.0.1 -c fsync=off "
            "-c synchronous_commit=off -c full_page_writes=off -c max_connections=200")
    _run(run_as, [pg_ctl, "-D", datadir, "-o", opts, "-l", os.path.join(base, "log"), "-w",
                  "-t", "60", "start"])
    cluster = PgCluster(datadir=datadir, port=port, run_as=run_as, pg_ctl=pg_ctl)
    deadline = time.time() + 30
    while time.time() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return cluster
        except OSError:
            time.sleep(0.2)
    cluster.stop()
    raise RuntimeError("the test PostgreSQL server did not start")
