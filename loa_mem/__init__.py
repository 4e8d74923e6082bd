"""loa-mem: a git-native memory layer for AI agents and the people who work with them."""

__all__ = ["__version__"]
__version__ = "0.1.0"
