"""``python -m isaforge`` is the ``isaforge`` command."""

from .entry import main

main()
