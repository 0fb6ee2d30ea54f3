"""python -m dtcast ARGS: runs the dtcast command-line program with ARGS (see `dtcast --help`).

On POSIX the program replaces this process (os.execv), so its exit status, signals and
standard streams are the program's own; elsewhere it runs as a child and its status is
returned."""

import os
import subprocess
import sys

from ._cli import cli_path


def main(argv=None):
    args = sys.argv[1:] if argv is None else list(argv)
    try:
        cli = cli_path()
    except FileNotFoundError as e:
        sys.stderr.write("dtcast: %s\n" % e)
        return 127
    if os.name == "posix":
        sys.stdout.flush()
        sys.stderr.flush()
        try:
            os.execv(cli, ["dtcast"] + args)
        except OSError as e:
            sys.stderr.write("dtcast: cannot run %s: %s\n" % (cli, e.strerror or e))
            return 126
    return subprocess.call([cli] + args)


if __name__ == "__main__":
    sys.exit(main())
