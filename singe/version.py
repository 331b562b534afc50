"""The package version (one definition: the package, the generated files and the wheel read it)."""

__version__ = "0.1.0"
