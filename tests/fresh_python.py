"""Running a snippet in a fresh interpreter with the worktree's src/ importable: the alias tests
need a process where the real torch was never imported."""

import os
import subprocess
import sys
import textwrap

SRC = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "src")


def run_fresh(code, cwd, timeout=300):
    """code's stdout (asserting that it exited 0, with its stderr's tail if not)."""
    env = dict(os.environ, PYTHONPATH=SRC)
    r = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True,
                       cwd=str(cwd), env=env, timeout=timeout)
    assert r.returncode == 0, r.stderr[-3000:]
    return r.stdout
