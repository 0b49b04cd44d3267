"""``python -m opweave_conformance --backend NAME ...`` (the same as ``opweave conformance``)."""

import sys

from .cli import main

sys.exit(main())
