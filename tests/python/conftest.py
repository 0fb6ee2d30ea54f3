"""pytest setup for the Python package's tests: the package from python/ (unless one is
installed), and the CLI from the build folder (unless DTCAST_CLI names one)."""
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

try:
    import dtcast  # noqa: F401
except ImportError:
    sys.path.insert(0, os.path.join(ROOT, "python"))

if not os.environ.get("DTCAST_CLI") and os.path.exists(os.path.join(ROOT, "build", "dtcast")):
    os.environ["DTCAST_CLI"] = os.path.join(ROOT, "build", "dtcast")
