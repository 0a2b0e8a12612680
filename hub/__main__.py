"""`python -m hub` is the `duplicast` command."""

import sys

from hub.cli import main

sys.exit(main())
