"""What the CLI tests written in Python share: the PASS/FAIL lines tests/run counts, and running
the dtcast program that sits beside the library under test (argv[1], build/libdtcast.so)."""

import os
import subprocess
import sys

_failures = 0


def check(ok, name, why=""):
    """Prints "PASS name", or "FAIL name: why" (one line) and counts it; returns ok."""
    global _failures
    if ok:
        print("PASS " + name)
    else:
        _failures += 1
        print("FAIL %s: %s" % (name, str(why).replace("\n", " | ")[:600]))
    sys.stdout.flush()
    return ok


def failures():
    """How many checks failed so far."""
    return _failures


def program(lib):
    """The dtcast program of the build that holds lib."""
    return os.path.join(os.path.dirname(os.path.abspath(lib)), "dtcast")


def runner(cli, text=True, timeout=120):
    """run(*args, stdin=None) -> (exit status, stdout, stderr) of cli with args; stdout is text
    (undecodable bytes replaced) when text is true, else bytes; stderr is always text."""
    def run(*args, stdin=None):
        p = subprocess.run([cli] + [str(a) for a in args], input=stdin, capture_output=True,
                           timeout=timeout)
        out = p.stdout.decode("utf-8", "replace") if text else p.stdout
        return p.returncode, out, p.stderr.decode("utf-8", "replace")
    return run
