"""``python -m yuesheng``: the command line."""

from yuesheng.cli import main_exit

main_exit()
