"""`python -m hub` is the `duplicast` command."""

import sys

from hub.cli.main import main

sys.exit(main())
