"""Drawing positions: text (``ansi``) here; pictures come with their own module."""
