"""pytest setup for the cocotb benches: the bench modules import each other
by plain name (cocotb loads them that way too), so this folder goes on
sys.path."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
