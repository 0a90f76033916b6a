"""``python -m oddtrick`` is the ``oddtrick`` command."""

import sys

try:
    from oddtrick._cli import main
except KeyboardInterrupt:  # Ctrl-C while the package loads: one line, not a traceback
    print("oddtrick: stopped (Ctrl-C) while starting; nothing was done", file=sys.stderr)
    sys.exit(130)

sys.exit(main())
