"""The binding's version: the C header's CK_VERSION_STRING it was written for.

The one Python copy of the version (pyproject.toml reads it; _ffi derives the library version it
accepts from it); scripts/check_version.py (`make check-abi`) fails when it disagrees with
include/capturekit/ck_base.h. Nothing here loads the library.
"""

__version__ = "0.2.0"
