"""Shared test setup: tests/ on sys.path (corpus, strategies) and one operator cache."""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
