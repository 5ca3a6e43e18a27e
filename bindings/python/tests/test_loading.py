"""Loading the library: lookup order, version check, declarations, struct layouts."""

import ast
import ctypes
import os
import pathlib
import re

import numpy as np
import pytest

import capturekit as ck
from capturekit import _ffi

PACKAGE_DIR = pathlib.Path(ck.__file__).parent
HEADER = pathlib.Path(__file__).resolve().parents[3] / "include" / "capturekit.h"


def header_text():
    """The umbrella header and the area headers it includes (include/capturekit/ck_*.h)."""
    files = [HEADER] + sorted((HEADER.parent / "capturekit").glob("*.h"))
    return "\n".join(f.read_text() for f in files if f.exists())

REAL_LIBRARY = os.path.realpath(_ffi.library_path)


def header_version():
    """(major, minor, patch) of include/capturekit/ck_base.h, the one version number."""
    text = header_text()
    return tuple(int(re.search(rf"#define CK_VERSION_{p} (\d+)", text).group(1)) for p in ("MAJOR", "MINOR", "PATCH"))


@pytest.mark.skipif(not HEADER.exists(), reason="needs the source tree's header")
def test_version():
    major, minor, patch = header_version()
    assert ck.version() == f"{major}.{minor}.{patch}"
    assert ck.version_number() == major * 10000 + minor * 100 + patch
    assert ck.version_info() == (major, minor, patch)
    assert ck.version_number() // 10000 == ck.VERSION_MAJOR == 0
    assert ck.__version__ == ck.version()


@pytest.mark.skipif(not HEADER.exists(), reason="needs the source tree's header")
def test_binding_version_matches_header():
    text = header_text()
    major = int(re.search(r"#define CK_VERSION_MAJOR (\d+)", text).group(1))
    string = re.search(r'#define CK_VERSION_STRING "([^"]+)"', text).group(1)
    assert _ffi.EXPECTED_MAJOR == major
    assert _ffi.EXPECTED_MINOR == int(re.search(r"#define CK_VERSION_MINOR (\d+)", text).group(1))
    assert ck.__version__ == string
    # The SONAME the binding loads from the system path and names its wheel copy after.
    assert _ffi.LIBRARY_SONAME == (f"libcapturekit.so.0.{_ffi.EXPECTED_MINOR}" if major == 0 else f"libcapturekit.so.{major}")


def test_status_strings():
    expected = {
        0: "CK_OK", 1: "CK_MISS", -1: "CK_E_INVALID_ARGUMENT", -2: "CK_E_BUFFER_TOO_SMALL", -3: "CK_E_IO",
        -4: "CK_E_CORRUPT", -5: "CK_E_STATE", -6: "CK_E_UNSUPPORTED", -7: "CK_E_NOT_FOUND", -8: "CK_E_NO_MEMORY",
        -9: "CK_E_EXISTS", -10: "CK_E_BUSY",
    }
    for code, name in expected.items():
        assert ck.status_string(code).startswith(name + ":"), code
        assert ck.errors.STATUS_NAMES[code] == name
    assert ck.status_string(-11) == "unknown status"
    assert ck.status_string(12345) == "unknown status"
    with pytest.raises(ValueError):
        ck.status_string(2**31)
    with pytest.raises(TypeError):
        ck.status_string(1.0)


def test_struct_sizes_match_header_comments():
    sizes = {"ck_vec3": 12, "ck_quat": 16, "ck_mat4": 64, "ck_intrinsics": 24, "ck_ray": 24, "ck_box": 36,
             "ck_hit": 24, "ck_fit_options": 20}
    for name, size in sizes.items():
        assert ctypes.sizeof(getattr(_ffi, name)) == size, name


@pytest.mark.skipif(not HEADER.exists(), reason="needs the source tree's header")
def test_struct_fields_match_header():
    text = header_text()
    box = re.search(r"typedef struct ck_box \{(.*?)\} ck_box;", text, re.S).group(1)
    names = re.findall(r"\b(\w+);", re.sub(r"/\*.*?\*/", "", box, flags=re.S))
    assert names == [f[0] for f in _ffi.ck_box._fields_]
    opts = re.search(r"typedef struct ck_fit_options \{(.*?)\} ck_fit_options;", text, re.S).group(1)
    names = re.findall(r"\b(\w+);", re.sub(r"/\*.*?\*/", "", opts, flags=re.S))
    assert names == [f[0] for f in _ffi.ck_fit_options._fields_]


@pytest.mark.skipif(not HEADER.exists(), reason="needs the source tree's header")
def test_every_header_function_is_declared_once():
    declared = re.findall(r"CK_API\s+[\w\s\*]+?\b(ck_\w+)\s*\(", header_text())
    assert len(declared) == len(set(declared))
    assert sorted(declared) == sorted(_ffi.FUNCTION_NAMES)
    assert len(_ffi.FUNCTION_NAMES) == len(set(_ffi.FUNCTION_NAMES))
    for name in declared:
        func = getattr(_ffi.lib, name)
        func = getattr(func, "__wrapped__", func)  # the Ctrl-C guard of ndpointer functions
        assert func.argtypes is not None, name


@pytest.mark.skipif(not HEADER.exists(), reason="needs the source tree's header")
def test_every_declaration_has_the_headers_parameter_count_and_kinds():
    """argtypes of every function: as many as the header's parameters, and a status return
    exactly where the header returns ck_status (the errcheck raises on negative codes)."""
    text = re.sub(r"/\*.*?\*/", "", header_text(), flags=re.S)
    protos = re.findall(r"CK_API\s+([\w\s\*]+?)\s*\b(ck_\w+)\s*\(([^)]*)\)\s*;", text)
    assert len(protos) == len(_ffi.FUNCTION_NAMES)
    by_name = {name: (restype, argtypes) for name, restype, argtypes in _ffi._PROTOTYPES}
    for ret, name, params in protos:
        params = " ".join(params.split())
        n = 0 if params in ("", "void") else params.count(",") + 1
        restype, argtypes = by_name[name]
        assert len(argtypes) == n, f"{name}: {len(argtypes)} argtypes, the header has {n} parameters"
        assert (ret.strip() == "ck_status") == (restype is _ffi._status), name
        # Outputs first: the header's `*_out`, `dst` and `*_dst` parameters come before the inputs.
        names = [p.split()[-1].lstrip("*") for p in params.split(",")] if n else []
        outs = [i for i, p in enumerate(names) if p.endswith("_out") or p == "dst" or p.endswith("_dst")
                or p in ("dst_capacity", "out")]
        assert outs == list(range(len(outs))), f"{name}: outputs not first in the header ({names})"


def test_only_ffi_imports_ctypes():
    for path in PACKAGE_DIR.glob("*.py"):
        if path.name == "_ffi.py":
            continue
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                assert not any(a.name.startswith("ctypes") for a in node.names), path.name
            elif isinstance(node, ast.ImportFrom):
                assert not (node.module or "").startswith("ctypes"), path.name


def test_ffi_functions_return_status_and_raise():
    box = _ffi.ck_box()
    status = _ffi.lib.ck_box_init(box, _ffi.ck_vec3(0, 0, 0), _ffi.ck_vec3(1, 1, 1), 0.0)
    assert status == 0
    with pytest.raises(ck.InvalidArgumentError):
        _ffi.lib.ck_box_init(None, _ffi.ck_vec3(0, 0, 0), _ffi.ck_vec3(1, 1, 1), 0.0)
    assert "box_out" in ck.last_error_message()


# -- lookup order ---------------------------------------------------------------------------


@pytest.fixture
def no_fallbacks(monkeypatch, tmp_path):
    """No library inside the package and none on the system path."""
    monkeypatch.setattr(_ffi, "_package_library_path", lambda: str(tmp_path / "pkg" / "libcapturekit.so"))
    monkeypatch.setattr(_ffi, "_system_library", lambda: None)
    return tmp_path


def test_missing_library_names_all_three_attempts(no_fallbacks):
    missing = str(no_fallbacks / "nowhere" / "libcapturekit.so")
    with pytest.raises(ck.LibraryNotFoundError) as info:
        _ffi._load({"CAPTUREKIT_LIBRARY": missing})
    text = str(info.value)
    assert isinstance(info.value, ImportError)
    assert "CAPTUREKIT_LIBRARY" in text and missing in text
    assert str(no_fallbacks / "pkg" / "libcapturekit.so") in text
    assert "system library path" in text
    lines = [line for line in text.splitlines() if re.match(r"\s+\d\. ", line)]
    assert len(lines) == 3
    assert "CAPTUREKIT_LIBRARY" in lines[0] and "package" in lines[1] and "system" in lines[2]


def test_unset_env_is_reported(no_fallbacks):
    with pytest.raises(ck.LibraryNotFoundError, match="CAPTUREKIT_LIBRARY: not set"):
        _ffi._load({})


def test_env_var_comes_first(monkeypatch):
    monkeypatch.setattr(_ffi, "_package_library_path", lambda: "/does/not/exist/libcapturekit.so")
    monkeypatch.setattr(_ffi, "_system_library", lambda: pytest.fail("the system library path must not be reached"))
    cdll = _ffi._load({"CAPTUREKIT_LIBRARY": REAL_LIBRARY})
    assert cdll._name == REAL_LIBRARY
    assert cdll.ck_version_string() == ck.__version__


def test_package_copy_is_second(monkeypatch, tmp_path):
    inside = tmp_path / "libcapturekit.so"
    inside.symlink_to(REAL_LIBRARY)  # the same file, so dlopen returns the already loaded image
    monkeypatch.setattr(_ffi, "_package_library_path", lambda: str(inside))
    monkeypatch.setattr(_ffi, "_system_library", lambda: pytest.fail("the system library path must not be reached"))
    cdll = _ffi._load({})
    assert cdll._name == str(inside)
    with pytest.warns(RuntimeWarning, match="CAPTUREKIT_LIBRARY"):
        cdll = _ffi._load({"CAPTUREKIT_LIBRARY": str(tmp_path / "typo.so")})
    assert cdll._name == str(inside)


def test_system_library_is_third(no_fallbacks, monkeypatch):
    monkeypatch.setattr(_ffi, "_system_library", lambda: REAL_LIBRARY)
    cdll = _ffi._load({})
    assert cdll._name == REAL_LIBRARY
    assert cdll.ck_version_number() == _ffi.EXPECTED_MAJOR * 10000 + _ffi.EXPECTED_MINOR * 100 + ck.version_info()[2]


def test_version_check_rejects_another_major(monkeypatch):
    monkeypatch.setattr(_ffi, "EXPECTED_MAJOR", 1)
    with pytest.raises(ck.VersionMismatchError) as info:
        _ffi._load({"CAPTUREKIT_LIBRARY": REAL_LIBRARY})
    assert isinstance(info.value, ImportError)
    assert ck.__version__ in str(info.value) and "major version 1" in str(info.value)


def test_version_check_needs_the_same_minor_while_major_is_0(monkeypatch):
    monkeypatch.setattr(_ffi, "EXPECTED_MINOR", 99)
    with pytest.raises(ck.VersionMismatchError, match="needs 0.99.x"):
        _ffi._load({"CAPTUREKIT_LIBRARY": REAL_LIBRARY})


def test_version_check_uses_runtime_number():
    class FakeLibrary:
        _name = "fake"

        @staticmethod
        def ck_version_number():
            return 10203

        @staticmethod
        def ck_version_string():
            return "1.2.3"

    with pytest.raises(ck.VersionMismatchError, match="1.2.3"):
        _ffi._check_version(FakeLibrary())


def test_matrix_conversion_is_column_major():
    M = np.arange(16, dtype=np.float32).reshape(4, 4)
    m = _ffi.mat4_from_array(M)
    for r in range(4):
        for c in range(4):
            assert m.m[c * 4 + r] == M[r, c]
    assert np.array_equal(_ffi.mat4_to_array(m), M)
    assert list(m.m[12:15]) == [3.0, 7.0, 11.0]  # the translation column


def test_star_import_exports_every_public_name():
    """`from capturekit import *` gives every public class and function the package defines (it
    missed Dataset and Session), and __all__ names nothing that does not exist."""
    import inspect
    public = {n for n, v in vars(ck).items()
              if not n.startswith("_") and (inspect.isclass(v) or inspect.isfunction(v))
              and getattr(v, "__module__", "").startswith("capturekit")}
    assert public - set(ck.__all__) == set()
    assert all(hasattr(ck, n) for n in ck.__all__)


# -- a library that is found but needs one that is missing ---------------------------------------


@pytest.fixture(scope="module")
def needs_missing(tmp_path_factory):
    """A stand-in libcapturekit.so.X.Y whose NEEDED libckmissing.so.9 is gone (built with cc)."""
    import shutil
    import subprocess

    cc = shutil.which(os.environ.get("CC", "cc"))
    if cc is None:
        pytest.skip("needs a C compiler")
    d = tmp_path_factory.mktemp("needs-missing")
    (d / "dep.c").write_text("int ck_dep(void) { return 1; }\n")
    (d / "lib.c").write_text("int ck_dep(void);\nint ck_version_number(void) { return ck_dep(); }\n")
    subprocess.run([cc, "-shared", "-fPIC", "-o", d / "libckmissing.so.9", d / "dep.c", "-Wl,-soname,libckmissing.so.9"], check=True)
    lib = d / _ffi.LIBRARY_SONAME
    subprocess.run([cc, "-shared", "-fPIC", "-o", lib, d / "lib.c", f"-L{d}", "-l:libckmissing.so.9"], check=True)
    (d / "libckmissing.so.9").unlink()
    return lib


def test_missing_dependency_is_one_line_with_the_source_build_advice(needs_missing, no_fallbacks):
    with pytest.raises(ck.LibraryNotFoundError) as info:
        _ffi._load({"CAPTUREKIT_LIBRARY": str(needs_missing)})
    text = str(info.value)
    assert "\n" not in text
    assert text.startswith("capturekit: libckmissing.so.9 is missing") and _ffi.LIBRARY_SONAME in text
    assert "install the package that provides it" in text and "reinstall" not in text
    assert info.value.name == "capturekit"  # `python -m capturekit` then prints one line too
    assert info.value.__cause__ is None and info.value.__suppress_context__


def test_missing_dependency_in_a_wheel_says_reinstall(needs_missing, monkeypatch):
    monkeypatch.setattr(_ffi, "_package_library_path", lambda: str(needs_missing))
    with pytest.raises(ck.LibraryNotFoundError) as info:
        _ffi._load({})
    text = str(info.value)
    assert "\n" not in text and "libckmissing.so.9 is missing" in text
    assert "reinstall" in text and "capturekit.libs" in text


def test_missing_dependency_names_the_debian_package():
    err = _ffi._dependency_error("system library path", "/usr/lib/libcapturekit.so.0.2", "libzstd.so.1", packaged=False)
    assert "apt-get install libzstd1" in str(err)
    assert _ffi._missing_dependency("/x/libcapturekit.so.0.2", OSError("/x/libcapturekit.so.0.2: cannot open shared object file: No such file or directory")) is None
    assert _ffi._missing_dependency("libcapturekit.so.0.2", OSError("libcapturekit.so.0.2: cannot open shared object file: No such file or directory")) is None
    assert _ffi._missing_dependency("/x/libcapturekit.so.0.2", OSError("libturbojpeg.so.0: cannot open shared object file: No such file or directory")) == "libturbojpeg.so.0"


def test_command_prints_one_line_when_the_library_does_not_load(needs_missing):
    """The installed `capturekit` command (_capturekit_cli:main) and `python -m capturekit`."""
    import subprocess
    import sys

    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "CAPTUREKIT_LIBRARY": str(needs_missing),
           "PYTHONPATH": str(PACKAGE_DIR.parent)}
    for argv in (["-c", "import sys, _capturekit_cli; sys.exit(_capturekit_cli.main(['inspect', '.']))"],
                 ["-m", "capturekit", "inspect", "."]):
        p = subprocess.run([sys.executable] + argv, capture_output=True, text=True, env=env)
        assert p.returncode == 1, (argv, p.stderr)
        lines = p.stderr.strip().splitlines()
        assert len(lines) == 1 and "libckmissing.so.9 is missing" in lines[0], (argv, p.stderr)
