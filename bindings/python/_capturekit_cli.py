"""Entry point of the installed ``capturekit`` command (pyproject.toml's [project.scripts]).

Importing the ``capturekit`` package loads ``libcapturekit``; when that fails (the library or one
it needs is missing, or it is another ABI version) the import raises an ImportError whose message
is one line saying what to do. This module sits outside the package so that the command can catch
it and print just that line, instead of a traceback through the import machinery.
"""

import sys


def main(argv=None) -> int:
    try:
        from capturekit.cli import main as cli_main
    except ImportError as e:
        if getattr(e, "name", None) != "capturekit" or type(e).__name__ not in ("LibraryNotFoundError", "VersionMismatchError"):
            raise
        print(str(e), file=sys.stderr)
        return 1
    return cli_main(argv)


if __name__ == "__main__":
    sys.exit(main())
