"""Reference physics in numpy: the definition every kernel is checked against."""
