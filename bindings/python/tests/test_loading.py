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


def test_version():
    assert ck.version() == "0.2.0"
    assert ck.version_number() == 200
    assert ck.version_info() == (0, 2, 0)
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
    monkeypatch.setattr(_ffi, "_find_library", lambda: None)
    return tmp_path


def test_missing_library_names_all_three_attempts(no_fallbacks):
    missing = str(no_fallbacks / "nowhere" / "libcapturekit.so")
    with pytest.raises(ck.LibraryNotFoundError) as info:
        _ffi._load({"CAPTUREKIT_LIBRARY": missing})
    text = str(info.value)
    assert isinstance(info.value, ImportError)
    assert "CAPTUREKIT_LIBRARY" in text and missing in text
    assert str(no_fallbacks / "pkg" / "libcapturekit.so") in text
    assert 'find_library("capturekit")' in text
    lines = [line for line in text.splitlines() if re.match(r"\s+\d\. ", line)]
    assert len(lines) == 3
    assert "CAPTUREKIT_LIBRARY" in lines[0] and "package" in lines[1] and "find_library" in lines[2]


def test_unset_env_is_reported(no_fallbacks):
    with pytest.raises(ck.LibraryNotFoundError, match="CAPTUREKIT_LIBRARY: not set"):
        _ffi._load({})


def test_env_var_comes_first(monkeypatch):
    monkeypatch.setattr(_ffi, "_package_library_path", lambda: "/does/not/exist/libcapturekit.so")
    monkeypatch.setattr(_ffi, "_find_library", lambda: pytest.fail("find_library must not be reached"))
    cdll = _ffi._load({"CAPTUREKIT_LIBRARY": REAL_LIBRARY})
    assert cdll._name == REAL_LIBRARY
    assert cdll.ck_version_string() == "0.2.0"


def test_package_copy_is_second(monkeypatch, tmp_path):
    inside = tmp_path / "libcapturekit.so"
    inside.symlink_to(REAL_LIBRARY)  # the same file, so dlopen returns the already loaded image
    monkeypatch.setattr(_ffi, "_package_library_path", lambda: str(inside))
    monkeypatch.setattr(_ffi, "_find_library", lambda: pytest.fail("find_library must not be reached"))
    cdll = _ffi._load({})
    assert cdll._name == str(inside)
    with pytest.warns(RuntimeWarning, match="CAPTUREKIT_LIBRARY"):
        cdll = _ffi._load({"CAPTUREKIT_LIBRARY": str(tmp_path / "typo.so")})
    assert cdll._name == str(inside)


def test_find_library_is_third(no_fallbacks, monkeypatch):
    monkeypatch.setattr(_ffi, "_find_library", lambda: REAL_LIBRARY)
    cdll = _ffi._load({})
    assert cdll._name == REAL_LIBRARY
    assert cdll.ck_version_number() == 200


def test_version_check_rejects_another_major(monkeypatch):
    monkeypatch.setattr(_ffi, "EXPECTED_MAJOR", 1)
    with pytest.raises(ck.VersionMismatchError) as info:
        _ffi._load({"CAPTUREKIT_LIBRARY": REAL_LIBRARY})
    assert isinstance(info.value, ImportError)
    assert "0.2.0" in str(info.value) and "major version 1" in str(info.value)


def test_version_check_needs_the_same_minor_while_major_is_0(monkeypatch):
    monkeypatch.setattr(_ffi, "EXPECTED_MINOR", 1)
    with pytest.raises(ck.VersionMismatchError, match="needs 0.1.x"):
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
