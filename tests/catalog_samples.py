"""The schema-driven sample generator ships with the conformance suite; tests import it under this name."""

import sys

from opweave_conformance.opdb import schema_samples

sys.modules[__name__] = schema_samples
