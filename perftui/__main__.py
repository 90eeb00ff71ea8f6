"""``python -m perftui``: the ``perftui`` command."""

import sys

from .launch import main

sys.exit(main())
