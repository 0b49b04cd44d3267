"""The serialization tests share ``serialization_support`` (imported by plain name)."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
