"""The ``marquet`` command installed by the wheel (the same code as the Rust binary)."""

import sys

from ._marquet import _cli_main


def main() -> None:
    """Run ``marquet ARGS`` and exit with its status."""
    sys.stdout.flush()
    sys.exit(_cli_main(["marquet", *sys.argv[1:]]))


if __name__ == "__main__":
    main()
