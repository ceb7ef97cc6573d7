"""``python -m summaryguard.rules.cli``: the ``summaryguard`` command."""

import sys

from .command import main

sys.exit(main())
