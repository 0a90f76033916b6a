"""``python -m oddtrick`` is the ``oddtrick`` command."""

import sys

from oddtrick._cli import main

sys.exit(main())
