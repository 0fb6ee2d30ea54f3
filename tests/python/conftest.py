"""Shared by the package's tests: where the build under test is, and the PASS/FAIL lines that
tests/run counts (DTCAST_TEST_LINES=1)."""

import os
import sys

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BUILD = os.environ.get("DTCAST_BUILD", os.path.join(REPO, "build"))


@pytest.fixture(scope="session")
def libdtcast():
    """The C library of the build under test, through ctypes (tests/model/dtlib.py): the
    reference the package's bytes are compared with."""
    sys.path.insert(0, os.path.join(REPO, "tests", "model"))
    import dtlib

    return dtlib.Lib(os.path.join(BUILD, "libdtcast.so"))


def pytest_runtest_logreport(report):
    # each line starts on a line of its own: pytest's progress dots have no newline
    if not os.environ.get("DTCAST_TEST_LINES"):
        return
    name = report.nodeid.split("/")[-1]
    if report.failed:
        why = str(report.longrepr).strip().splitlines()[-1] if report.longrepr else "failed"
        sys.__stdout__.write(f"\nFAIL {name} ({report.when}): {why}\n")
    elif report.when == "call" and report.passed:
        sys.__stdout__.write(f"\nPASS {name}\n")
    elif report.skipped and report.when in ("setup", "call"):
        reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else ""
        sys.__stdout__.write(f"\nSKIP {name}: {reason}\n")
    sys.__stdout__.flush()


# The CLI that dtcast.convert_file runs (test_files.py, test_dask_example.py): the build's,
# unless DTCAST_CLI names one.
if not os.environ.get("DTCAST_CLI") and os.path.exists(os.path.join(BUILD, "dtcast")):
    os.environ["DTCAST_CLI"] = os.path.join(BUILD, "dtcast")
