"""Where the dtcast command-line program is: the one installed inside the package (dtcast/_bin),
else $DTCAST_CLI (the test suite points it at a build folder's program)."""

import os
import shutil

__all__ = ["cli_path"]


def cli_path():
    env = os.environ.get("DTCAST_CLI")
    if env:
        return env
    here = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_bin", "dtcast")
    if os.access(here, os.X_OK):
        return here
    found = shutil.which("dtcast")
    if found:
        return found
    raise FileNotFoundError("the dtcast program is not installed beside the package "
                            "(dtcast/_bin/dtcast); set DTCAST_CLI to its path")
