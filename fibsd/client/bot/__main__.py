"""``python -m fibsd.client.bot``: the ``fibsd-bot`` command."""

import sys

from fibsd.client.bot.command import main

if __name__ == "__main__":
    sys.exit(main())
