"""Running tilescope-cli for the shim: where it is and what `tilescope-cli kt` asked for (its
environment), the problem checked with `space`, a tuning session, and its results read back."""

import json
import os
import subprocess
import sys
import threading
from datetime import datetime, timezone


class TuneFailed(RuntimeError):
    """tilescope-cli tune ended with an error; the message is its own."""


class Cli:
    """tilescope-cli and the settings `tilescope-cli kt` passes in the environment."""

    def __init__(self):
        self.exe = os.environ.get("TILESCOPE_CLI", "")
        if not self.exe:
            raise RuntimeError(
                "Tilescope cannot find tilescope-cli: this kernel_tuner is Tilescope's stand-in for Kernel "
                "Tuner, and runs under `tilescope-cli kt SCRIPT.py` (which sets TILESCOPE_CLI)"
            )
        self.backend = os.environ.get("TILESCOPE_KT_BACKEND") or "cuda"
        self.db = os.path.abspath(os.environ.get("TILESCOPE_KT_DB") or "tilescope-kt.db")
        self.omit_failed = os.environ.get("TILESCOPE_KT_OMIT_FAILED") == "1"
        text = os.environ.get("TILESCOPE_KT_TUNE_ARGS")
        self.tune_args = []
        if text:
            try:
                args = json.loads(text)
            except ValueError as e:
                raise RuntimeError(f"TILESCOPE_KT_TUNE_ARGS is not JSON: {e}") from None
            if not isinstance(args, list) or not all(isinstance(a, str) for a in args):
                raise RuntimeError("TILESCOPE_KT_TUNE_ARGS must be a JSON list of strings")
            self.tune_args = args

    @property
    def problem_root(self):
        """Where the problems of this database live: <db without .db>.kt/"""
        base = self.db[:-3] if self.db.endswith(".db") else self.db
        return base + ".kt"

    def kind(self, backend=None):
        """cuda (runs kernels: cuda, cuda:N, ssh://...), analysis or replay."""
        b = backend or self.backend
        if b.startswith("analysis:") or b == "analysis":
            return "analysis"
        if b.startswith("replay:"):
            return "replay"
        return "cuda"

    def capture(self, args):
        p = subprocess.run([self.exe] + args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        return p.returncode, p.stdout, p.stderr

    def space(self, problem, sample=64):
        """`space --json` of the problem, or (None, its error) when it refuses it."""
        rc, out, err = self.capture(["space", str(problem), "--json", "--sample", str(sample), "--seed", "0"])
        if rc != 0:
            return None, err.strip() or out.strip()
        try:
            return json.loads(out), err
        except ValueError as e:
            return None, f"space --json printed no JSON ({e})"

    def tune(self, args, quiet):
        """Runs `tune ARGS`: its output streamed unless quiet; raises TuneFailed on an error, with
        its message, and KeyboardInterrupt when it was interrupted."""
        sys.stdout.flush()
        sys.stderr.flush()
        command = [self.exe, "tune"] + [str(a) for a in args]
        if quiet:
            p = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            rc, err = p.returncode, p.stderr
        else:
            p = subprocess.Popen(command, stderr=subprocess.PIPE)
            chunks = []

            def pump():
                while True:
                    data = p.stderr.read1(65536) if hasattr(p.stderr, "read1") else p.stderr.read(65536)
                    if not data:
                        break
                    chunks.append(data)
                    try:
                        sys.stderr.buffer.write(data)
                    except AttributeError:
                        sys.stderr.write(data.decode(errors="replace"))
                    sys.stderr.flush()

            t = threading.Thread(target=pump, daemon=True)
            t.start()
            rc = p.wait()
            t.join()
            err = b"".join(chunks).decode(errors="replace")
        if rc == 130:
            raise KeyboardInterrupt("tilescope-cli tune was interrupted (its session can be resumed)")
        if rc != 0:
            lines = [line for line in err.splitlines() if line.strip()]
            errors = [line for line in lines if line.startswith("error:")]
            message = "\n".join(errors or lines[-5:]) or f"exit status {rc}"
            raise TuneFailed(f"tilescope-cli tune failed (exit status {rc}): {message}")

    def rank_by(self):
        """The --rank-by the tunes were given (how configs analysed, not timed, rank), or None."""
        value = None
        for i, a in enumerate(self.tune_args):
            if a == "--rank-by" and i + 1 < len(self.tune_args):
                value = self.tune_args[i + 1]
            elif a.startswith("--rank-by="):
                value = a[len("--rank-by="):]
        return value

    def results(self, session):
        """`show --json` of one session: every result, best first (configs analysed, not timed,
        ranked as the tunes were asked to rank them)."""
        args = ["show", self.db, "--json"] + ([] if session is None else ["--session", str(session)])
        if self.rank_by():
            args += ["--rank-by", self.rank_by()]
        rc, out, err = self.capture(args)
        if rc != 0:
            raise TuneFailed(f"tilescope-cli show failed (exit status {rc}): {err.strip()}")
        return json.loads(out)


def sessions(db):
    """The sessions of a results database (id, kernel, backend, device_name, arch, provenance),
    read with SQLite; [] when it has none yet."""
    if not os.path.isfile(db):
        return []
    try:
        import sqlite3
    except ImportError:
        return None
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        rows = con.execute(
            "SELECT id, kernel, backend, device_name, arch, provenance, state, message FROM sessions ORDER BY id"
        ).fetchall()
    except sqlite3.Error:
        return []
    finally:
        con.close()
    out = []
    for row in rows:
        provenance = {}
        try:
            provenance = json.loads(row[5]) if row[5] else {}
        except ValueError:
            pass
        out.append(
            dict(
                id=row[0],
                kernel=row[1],
                backend=row[2] or "",
                device_name=row[3] or "",
                arch=row[4] or "",
                provenance=provenance if isinstance(provenance, dict) else {},
                state=row[6] or "",
                message=row[7] or "",
            )
        )
    return out


def kt_timestamp(recorded_at):
    """Tilescope's "2026-12-03T15:56:51.130Z" as Kernel Tuner writes timestamps."""
    try:
        t = datetime.strptime(recorded_at.replace("Z", "+0000"), "%Y-%m-%dT%H:%M:%S.%f%z")
    except (ValueError, AttributeError):
        try:
            t = datetime.strptime(recorded_at.replace("Z", "+0000"), "%Y-%m-%dT%H:%M:%S%z")
        except (ValueError, AttributeError):
            return str(datetime.now(timezone.utc))
    return str(t.astimezone(timezone.utc))
