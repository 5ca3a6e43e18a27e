"""Marks the wheel as platform-specific when it ships libcapturekit.so (metadata is in pyproject.toml).

The package itself is pure Python (ctypes), but a wheel that carries the shared library must not
be tagged "any": it is tagged py3-none-<platform> (root_is_pure = False, no Python ABI needed).
"""

import glob
import os

from setuptools import setup
from setuptools.dist import Distribution

_HERE = os.path.dirname(os.path.abspath(__file__))
# The library is shipped under its SONAME (libcapturekit.so.0.2 while the major is 0).
_SHIPS_LIBRARY = bool(glob.glob(os.path.join(_HERE, "capturekit", "libcapturekit.so.*")))

cmdclass = {}
try:  # setuptools >= 70.1 has its own bdist_wheel; older ones use the `wheel` package's.
    from setuptools.command.bdist_wheel import bdist_wheel as _bdist_wheel
except ImportError:  # pragma: no cover - depends on the installed setuptools
    try:
        from wheel.bdist_wheel import bdist_wheel as _bdist_wheel
    except ImportError:
        _bdist_wheel = None

if _bdist_wheel is not None and _SHIPS_LIBRARY:

    class bdist_wheel(_bdist_wheel):
        def finalize_options(self):
            super().finalize_options()
            self.root_is_pure = False

        def get_tag(self):
            _, _, platform = super().get_tag()
            return "py3", "none", platform

    cmdclass["bdist_wheel"] = bdist_wheel


class BinaryDistribution(Distribution):
    def has_ext_modules(self):
        return _SHIPS_LIBRARY


setup(cmdclass=cmdclass, distclass=BinaryDistribution)
