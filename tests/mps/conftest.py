"""The Metal tests run on any OS: generated MSL is compile-checked as C++, the runtime against a fake.

Helper modules of this folder (``msl_programs``, ``fake_metal``) import by plain name.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
