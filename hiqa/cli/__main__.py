"""``python -m hiqa.cli``: the same as the ``hiqa`` command."""
from hiqa.cli.main import main

raise SystemExit(main())
