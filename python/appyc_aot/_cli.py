"""The `appyc` command installed with the package: the same command line as the Rust binary."""
import sys

from ._native import main as _main


def main() -> None:
    sys.exit(_main(list(sys.argv)))
