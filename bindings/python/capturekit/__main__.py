"""``python -m capturekit``: the ``capturekit`` command (see :mod:`capturekit.cli`)."""

import sys

from .cli import main

sys.exit(main())
