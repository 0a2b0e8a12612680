"""`python -m hub` is the `duplicast` command."""

import sys

try:
    from hub.cli.main import main
except KeyboardInterrupt:  # Ctrl-C while it loads: as main() answers one (exit 130, no traceback)
    sys.exit(130)

sys.exit(main())
