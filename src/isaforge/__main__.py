"""``python -m isaforge`` is the ``isaforge`` command."""

from .cli import main

main(prog_name="isaforge")
