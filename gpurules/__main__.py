"""``python -m gpurules``: the command line (``gpurules.cli``)."""

import sys

from gpurules.cli import main

if __name__ == "__main__":
    sys.exit(main())
