"""The manifest and ZIP writers' sample outputs, checked with independent readers.

The Swift test `SampleOutputTests` writes them into `.build-fixtures/manifests/` (gitignored);
`make test` runs the Swift tests before pytest; a missing folder fails these tests (conftest.py). Readers used:
the standard `json` and `zipfile` modules and numpy, following the rules of the tools that load
these files (nerfstudio/instant-ngp for transforms.json, MultiScan for the camera info and metadata).
"""

import json
import pathlib
import re
import zipfile

import numpy as np
import pytest

FOLDER = pathlib.Path(__file__).resolve().parents[3] / ".build-fixtures" / "manifests"


@pytest.fixture(autouse=True)
def _samples(manifest_samples):
    """Fails (not skips) when the Swift test has not written the samples."""
    assert manifest_samples == FOLDER


@pytest.fixture(scope="module")
def expected():
    return json.loads((FOLDER / "expected.json").read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def transforms():
    return json.loads((FOLDER / "transforms.json").read_text(encoding="utf-8"))


def test_transforms_loads_by_nerfstudio_rules(transforms, expected):
    t = transforms
    assert t["camera_model"] == "OPENCV"
    # Frame 3's intrinsics differ, so there are no top-level ones (nerfstudio 1.1.5 would apply
    # them to every frame) and every frame carries all six.
    for key in ("fl_x", "fl_y", "cx", "cy", "w", "h"):
        assert key not in t
        assert all(key in f for f in t["frames"])
    for f in t["frames"]:
        assert isinstance(f["w"], int) and isinstance(f["h"], int) and f["w"] > 0 and f["h"] > 0 and f["fl_x"] > 1
    assert t["integer_depth_scale"] == 0.001
    poses = expected["poses_column_major"]
    assert len(t["frames"]) == len(poses)
    for frame, column_major in zip(t["frames"], poses):
        assert pathlib.PurePosixPath(frame["file_path"]).suffix == ".png"
        m = np.array(frame["transform_matrix"], dtype=np.float64)
        assert m.shape == (4, 4)
        # Row-major in the file = the column-major pose transposed.
        np.testing.assert_array_equal(m, np.array(column_major, dtype=np.float64).reshape(4, 4).T)
        np.testing.assert_array_equal(m[3], [0, 0, 0, 1])
        r = m[:3, :3]
        np.testing.assert_allclose(r @ r.T, np.eye(3), atol=1e-5)
        if "depth_file_path" in frame or "depth_path" in frame:
            assert frame["depth_file_path"] == frame["depth_path"]
            assert frame["depth_file_path"].endswith(".png")
        assert isinstance(frame["frame_id"], int) and isinstance(frame["pass"], int)
    # The first pose: 90° about +y, translation (1, 2, 3) in the last column.
    m0 = np.array(t["frames"][0]["transform_matrix"])
    np.testing.assert_allclose(m0[:3, 3], [1, 2, 3])
    np.testing.assert_allclose(m0[:3, :3], [[0, 0, 1], [0, 1, 0], [-1, 0, 0]], atol=1e-6)
    assert len({(f["fl_x"], f["cx"]) for f in t["frames"]}) == 2  # frame 3 differs from the others


def test_numbers_are_shortest_float_text():
    """Each float32 is written as its shortest round-trip decimal (the same digits numpy picks)."""
    t = json.loads((FOLDER / "transforms.json").read_text(encoding="utf-8"), parse_float=str)

    def significant(text):
        mantissa = re.sub(r"[eE].*", "", text.lstrip("-")).replace(".", "")
        return mantissa.strip("0") or "0"

    literals = [x for f in t["frames"] for x in (f["fl_x"], f["cx"])] + [x for f in t["frames"] for row in f["transform_matrix"] for x in row]
    assert len(literals) > 50
    for literal in literals:
        if isinstance(literal, int):
            continue
        value = np.float32(literal)
        assert np.float32(float(literal)) == value
        assert significant(literal) == significant(np.format_float_scientific(value, unique=True)), literal


def test_camera_info_by_multiscan_rules(transforms, expected):
    lines = (FOLDER / "camera_info.jsonl").read_text(encoding="utf-8").splitlines()
    assert len(lines) == len(transforms["frames"])
    for line, frame in zip(lines, transforms["frames"]):
        record = json.loads(line)
        assert list(record) == ["timestamp", "intrinsics", "transform", "euler_angles", "exposure_duration", "quaternion"]
        assert isinstance(record["timestamp"], int) and isinstance(record["exposure_duration"], int)
        # MultiScan's reader: reshape(4, 4) then transpose -> the row-major camera-to-world pose.
        pose = np.asarray(record["transform"], dtype=np.float64).reshape(4, 4).T
        np.testing.assert_array_equal(pose, np.array(frame["transform_matrix"]))
        k = np.asarray(record["intrinsics"], dtype=np.float64).reshape(3, 3).T
        np.testing.assert_array_equal(k, [[frame["fl_x"], 0, frame["cx"]], [0, frame["fl_y"], frame["cy"]], [0, 0, 1]])
        # OpenCV axes as MultiScan does it: right-multiply diag(1, -1, -1, 1).
        cv = pose @ np.diag([1, -1, -1, 1])
        np.testing.assert_allclose(cv[:3, 2], -pose[:3, 2])
        # The quaternion [w, x, y, z] is the pose's rotation.
        w, x, y, z = record["quaternion"]
        r = np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
                      [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
                      [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)]])
        np.testing.assert_allclose(r, pose[:3, :3], atol=1e-5)
        # euler_angles = [pitch, yaw, roll] with R = R_y(yaw) R_x(pitch) R_z(roll) (ARKit).
        pitch, yaw, roll = record["euler_angles"]
        cy_, sy_, cp, sp, cr, sr = np.cos(yaw), np.sin(yaw), np.cos(pitch), np.sin(pitch), np.cos(roll), np.sin(roll)
        ry = np.array([[cy_, 0, sy_], [0, 1, 0], [-sy_, 0, cy_]])
        rx = np.array([[1, 0, 0], [0, cp, -sp], [0, sp, cp]])
        rz = np.array([[cr, -sr, 0], [sr, cr, 0], [0, 0, 1]])
        np.testing.assert_allclose(ry @ rx @ rz, pose[:3, :3], atol=1e-5)


def test_scan_metadata(expected):
    scan_id = expected["scan_id"]
    assert re.fullmatch(r"\d{8}T\d{6}[+-]\d{4}_.+", scan_id)
    assert scan_id.startswith("20230615T103000+0000_")
    meta = json.loads((FOLDER / f"{scan_id}.json").read_text(encoding="utf-8"))
    for key in ("device", "user", "scene", "streams", "number_of_files", "depth_unit", "depth_confidence_value_range",
                "camera_orientation_quaternion_format", "camera_orientation_euler_angles_format",
                "depth_confidence_avaliable", "depth_confidence_available"):
        assert key in meta, key
    assert meta["depth_unit"] == "m" and meta["depth_confidence_value_range"] == [0, 2]
    assert meta["camera_orientation_quaternion_format"] == "wxyz" and meta["camera_orientation_euler_angles_format"] == "xyz"
    streams = meta["streams"]
    assert [s["id"] for s in streams] == ["color_back_1", "depth_back_1", "confidence_map", "camera_info_color_back_1"]
    assert streams[0]["resolution"] == [1440, 1920] and streams[1]["resolution"] == [192, 256]  # [h, w]
    assert streams[1]["encoding"] == "float16_zlib" and streams[1]["file_extension"] == "depth.zlib"
    assert streams[2]["encoding"] == "uint8_zlib" and streams[2]["file_extension"] == "confidence.zlib"
    assert streams[0]["extrinsics"] is None and len(streams[0]["intrinsics"]) == 9
    assert meta["device"]["name"] == "CaptureKit’s rig" and meta["scene"]["description"] == 'a box "on" a floor / test'


def test_bounding_box(expected):
    b = json.loads((FOLDER / "boundingbox.json").read_text(encoding="utf-8"))
    names = ["top_left_front", "top_right_front", "bot_right_front", "bot_left_front",
             "top_left_back", "top_right_back", "bot_right_back", "bot_left_back"]
    assert list(b) == ["center", "rad_rot_about_y", "positions", "entity_anchor_4x4", "size", "floor", "passes"]
    assert list(b["positions"]) == names
    corners = np.array([[b["positions"][n][a] for a in "xyz"] for n in names])
    np.testing.assert_array_equal(corners, np.array(expected["box_corners"]))
    np.testing.assert_array_equal(np.array(b["entity_anchor_4x4"]), np.eye(4))
    size = np.array([b["size"][a] for a in "xyz"])
    np.testing.assert_allclose(np.linalg.norm(corners[1] - corners[0]), size[0], rtol=1e-6)
    np.testing.assert_allclose(np.linalg.norm(corners[0] - corners[3]), size[1], rtol=1e-6)
    np.testing.assert_allclose(np.linalg.norm(corners[4] - corners[0]), size[2], rtol=1e-6)
    # Standing on the floor; the top corners are above the bottom ones.
    assert b["floor"] == pytest.approx(min(corners[:, 1]), abs=1e-6)
    assert (corners[[0, 1, 4, 5], 1] > corners[[3, 2, 7, 6], 1]).all()
    # Yaw about +y: world = center + R_y(yaw) local, front = local -z.
    yaw = b["rad_rot_about_y"]
    center = np.array([b["center"][a] for a in "xyz"])
    ry = np.array([[np.cos(yaw), 0, np.sin(yaw)], [0, 1, 0], [-np.sin(yaw), 0, np.cos(yaw)]])
    np.testing.assert_allclose(corners[0], center + ry @ (np.array([-1, 1, -1]) * size / 2), atol=1e-6)
    assert [p["pass"] for p in b["passes"]] == [0, 1] and b["passes"][1]["floor"] is None


def test_events():
    lines = (FOLDER / "events.jsonl").read_text(encoding="utf-8").splitlines()
    events = [json.loads(line) for line in lines]
    assert [e["code"] for e in events] == [1, 101]
    assert list(events[1]) == ["timestamp", "code", "name", "text", "face", "value"]
    assert events[1]["face"] == 2 and events[1]["value"] == 0.75 and events[0]["text"] == "Slow down"


@pytest.mark.parametrize("name", ["dataset.zip", "dataset-zip64.zip"])
def test_zip_reads_with_zipfile(name, expected):
    with zipfile.ZipFile(FOLDER / name) as z:
        assert z.testzip() is None
        infos = z.infolist()
        assert [i.filename for i in infos] == expected["zip_entries"]
        for info in infos:
            assert info.flag_bits & 0x800  # UTF-8 names
            assert info.date_time == (2023, 6, 15, 10, 30, 0)
        for entry in expected["zip_entries"][:5]:
            assert z.read(entry) == (FOLDER / entry).read_bytes()
        assert z.read("images/000000.png") == (FOLDER / "noise.bin").read_bytes()
        assert z.read("big.txt") == (FOLDER / "big.txt").read_bytes()
        assert z.read("données/é 😀.txt") == "é😀\n".encode()
        assert z.read("empty.txt") == b""
        methods = {i.filename: i.compress_type for i in infos}
        assert methods["images/000000.png"] == zipfile.ZIP_STORED      # incompressible: stored
        assert methods["big.txt"] == zipfile.ZIP_DEFLATED
        assert methods["transforms.json"] == zipfile.ZIP_DEFLATED
        assert z.getinfo("big.txt").compress_size < z.getinfo("big.txt").file_size // 3
    raw = (FOLDER / name).read_bytes()
    has_zip64_end = b"PK\x06\x06" in raw and b"PK\x06\x07" in raw
    assert has_zip64_end == (name == "dataset-zip64.zip")
