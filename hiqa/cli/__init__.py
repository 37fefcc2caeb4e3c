"""The ``hiqa`` command line: one module per command group; ``main`` is in ``hiqa.cli.main``."""
