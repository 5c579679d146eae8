"""tilescope-cli for the stand-in: what `tilescope-cli triton` asked for (its environment), the
problem checked with `space`, a tuning session run, its results read back, and the winners kept
beside the database so that a second run of the script measures nothing."""

import hashlib
import json
import os
import subprocess
import sys
import tempfile
import threading

from ._common import TuneFailed

ENV = "TILESCOPE_TRITON"


class Settings:
    """tilescope-cli and the run's settings, from the environment `tilescope-cli triton` sets:
    TILESCOPE_CLI (the program) and TILESCOPE_TRITON (a JSON object: backend, db, strategy,
    budget, space, retune, tune_args)."""

    def __init__(self, environ=None):
        environ = os.environ if environ is None else environ
        self.exe = environ.get("TILESCOPE_CLI", "")
        text = environ.get(ENV, "")
        try:
            data = json.loads(text) if text else {}
        except ValueError as e:
            raise RuntimeError(f"{ENV} is not JSON: {e}") from None
        if not isinstance(data, dict):
            raise RuntimeError(f"{ENV} must be a JSON object")
        self.backend = str(data.get("backend") or "cuda")
        self.db = os.path.abspath(str(data.get("db") or "tilescope-triton.db"))
        self.strategy = str(data.get("strategy") or "exhaustive")
        self.budget = int(data.get("budget") or 0)
        self.expand = data.get("space") == "expand"
        self.retune = bool(data.get("retune"))
        args = data.get("tune_args") or []
        if not isinstance(args, list) or not all(isinstance(a, str) for a in args):
            raise RuntimeError(f"{ENV}'s tune_args must be a list of strings")
        self.tune_args = args

    def require_cli(self):
        if not self.exe:
            raise RuntimeError(
                "Tilescope cannot find tilescope-cli: this autotuner stands in for Triton's under "
                "`tilescope-cli triton SCRIPT.py`, which sets TILESCOPE_CLI"
            )

    @property
    def root(self):
        """Where the problems and winners of this database live: <db without .db>.triton/"""
        base = self.db[:-3] if self.db.endswith(".db") else self.db
        return base + ".triton"

    @property
    def kind(self):
        """cuda (measures: cuda, cuda:N, ssh://...), analysis or replay."""
        b = self.backend
        if b == "analysis" or b.startswith("analysis:"):
            return "analysis"
        if b.startswith("replay:"):
            return "replay"
        return "cuda"

    def tune_command(self, problem):
        args = [str(problem), "--backend", self.backend, "--db", self.db, "--strategy", self.strategy]
        if self.budget > 0:
            args += ["--budget", str(self.budget)]
        return args + list(self.tune_args)

    # ---- tilescope-cli ----

    def _environment(self):
        env = dict(os.environ)
        # The compile helpers run Triton in the Python that runs the script, unless told otherwise,
        # and compile: Triton's interpreter, which the script may run under, compiles nothing.
        env.setdefault("TILESCOPE_PYTHON", sys.executable)
        env.pop("TRITON_INTERPRET", None)
        return env

    def capture(self, args):
        self.require_cli()
        p = subprocess.run([self.exe] + [str(a) for a in args], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           text=True, env=self._environment())
        return p.returncode, p.stdout, p.stderr

    def space(self, problem, sample=16):
        """`space --json` of the problem, or (None, its error) when it refuses it."""
        rc, out, err = self.capture(["space", str(problem), "--json", "--sample", str(sample), "--seed", "0"])
        if rc != 0:
            return None, err.strip() or out.strip()
        try:
            return json.loads(out), err
        except ValueError as e:
            return None, f"space --json printed no JSON ({e})"

    def tune(self, problem):
        """Runs `tune` on the problem, its report and progress on stderr (the script's stdout stays
        the script's); raises TuneFailed with its error and status, KeyboardInterrupt when it was
        interrupted. Returns the new session's id (None when it cannot be told)."""
        self.require_cli()
        before = sessions(self.db)
        last = max((s["id"] for s in before), default=0) if before else 0
        sys.stdout.flush()
        sys.stderr.flush()
        command = [self.exe, "tune"] + self.tune_command(problem)
        try:
            report = sys.stderr.fileno()
        except (AttributeError, OSError, ValueError):
            report = 2  # the script replaced sys.stderr with an object of its own: the process's stderr
        p = subprocess.Popen(command, stdout=report, stderr=subprocess.PIPE, env=self._environment())
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
            raise TuneFailed(f"tilescope-cli tune failed (exit status {rc}): {message}", rc)
        after = sessions(self.db)
        if after:
            new = [s["id"] for s in after if s["id"] > last]
            return new[-1] if new else after[-1]["id"]
        return None

    def results(self, session):
        """`show --json` of one session (the newest when None): its results, best first."""
        args = ["show", self.db, "--json"] + ([] if session is None else ["--session", str(session)])
        rc, out, err = self.capture(args)
        if rc != 0:
            raise TuneFailed(f"tilescope-cli show failed (exit status {rc}): {err.strip()}", rc)
        try:
            data = json.loads(out)
        except ValueError as e:
            raise TuneFailed(f"tilescope-cli show --json printed no JSON ({e})") from None
        return data if isinstance(data, list) else []


def sessions(db):
    """The session ids of a results database, read with SQLite ([] before the first)."""
    if not os.path.isfile(db):
        return []
    try:
        import sqlite3
    except ImportError:
        return None
    try:
        con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    except sqlite3.Error:
        return []
    try:
        rows = con.execute("SELECT id FROM sessions ORDER BY id").fetchall()
    except sqlite3.Error:
        return []
    finally:
        con.close()
    return [{"id": r[0]} for r in rows]


class Winners:
    """The winner of each tuned (kernel source, key, configs, backend, settings), in
    <root>/winners.json, so that a second run of the script reuses them without measuring."""

    def __init__(self, root):
        self.path = os.path.join(root, "winners.json")

    @staticmethod
    def digest(parts):
        return hashlib.sha256(json.dumps(parts, sort_keys=True, default=repr).encode()).hexdigest()

    def _read(self):
        try:
            with open(self.path, encoding="utf-8") as f:
                data = json.load(f)
        except (OSError, ValueError):
            return {}
        winners = data.get("winners") if isinstance(data, dict) else None
        return winners if isinstance(winners, dict) else {}

    def get(self, digest):
        entry = self._read().get(digest)
        return entry if isinstance(entry, dict) and isinstance(entry.get("config"), dict) else None

    def put(self, digest, entry):
        winners = self._read()
        winners[digest] = entry
        folder = os.path.dirname(self.path)
        os.makedirs(folder, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".winners-", suffix=".json", dir=folder)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                json.dump({"format": "tilescope-triton-winners", "version": 1, "winners": winners}, f, indent=1,
                          sort_keys=True)
                f.write("\n")
            os.replace(tmp, self.path)
        except BaseException:
            try:
                os.unlink(tmp)
            except OSError:
                pass
            raise
