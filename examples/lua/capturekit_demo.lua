-- capturekit_demo.lua — CaptureKit from LuaJIT through its own FFI: no glue code is compiled.
--
-- The C declarations below are copied from include/capturekit/*.h (only what this demo calls; the
-- struct layouts are frozen by the C API, and the sizes are asserted against the header's
-- comments). It builds a box, casts a ray at it, then runs a short guided session on the
-- library's synthetic scene, writing and finishing a dataset.
--
-- Usage: CAPTUREKIT_LIBRARY=/path/to/libcapturekit.so luajit capturekit_demo.lua [dataset-folder]
-- (without CAPTUREKIT_LIBRARY, the SONAME libcapturekit.so.0.2 is looked up the system's way).
-- The dataset folder must be new or empty (default: a fresh name under /tmp).
local ffi = require("ffi")

ffi.cdef [[
typedef int32_t ck_status;
const char *ck_status_string(ck_status status);
const char *ck_last_error_message(void);
uint32_t ck_version_number(void);
const char *ck_version_string(void);

typedef struct ck_vec3 { float x, y, z; } ck_vec3;
typedef struct ck_mat4 { float m[16]; } ck_mat4;
typedef struct ck_intrinsics { float fx, fy, cx, cy; uint32_t width, height; } ck_intrinsics;
typedef struct ck_ray { ck_vec3 origin; ck_vec3 direction; } ck_ray;
typedef struct ck_box { ck_vec3 center; ck_vec3 size; float yaw; float floor; int32_t has_floor; } ck_box;
typedef struct ck_hit { ck_vec3 point; float distance; int32_t face; int32_t inside; } ck_hit;
typedef struct ck_image { const void *data; uint32_t width, height; size_t stride; int32_t format; uint32_t reserved; } ck_image;
typedef struct ck_depth_map { const void *data; uint32_t width, height; size_t stride; int32_t format; uint32_t reserved; } ck_depth_map;

ck_status ck_box_init(ck_box *box_out, ck_vec3 center, ck_vec3 size, float yaw);
ck_status ck_box_scale(ck_box *box, ck_vec3 factors);
ck_status ck_intrinsics_scale(ck_intrinsics *out, const ck_intrinsics *in, uint32_t width, uint32_t height);
ck_status ck_ray_from_pixel(ck_ray *ray_out, const ck_mat4 *camera_pose, const ck_intrinsics *intrinsics, float u, float v);
ck_status ck_ray_box(ck_hit *hit_out, const ck_ray *ray, const ck_box *box);

typedef struct ck_scene ck_scene;
ck_status ck_scene_create(ck_scene **scene_out, uint64_t seed);
void ck_scene_free(ck_scene *scene);
ck_status ck_scene_target(ck_box *box_out, const ck_scene *scene);
ck_status ck_scene_render_depth(float *depth_dst, uint8_t *confidence_dst, size_t dst_capacity, size_t *written_out,
                                const ck_scene *scene, const ck_mat4 *camera_pose, const ck_intrinsics *intrinsics,
                                uint64_t frame);
ck_status ck_scene_render_rgb(uint8_t *dst, size_t dst_capacity, size_t *written_out, const ck_scene *scene,
                              const ck_mat4 *camera_pose, const ck_intrinsics *intrinsics);

typedef struct ck_guidance {
    int32_t capture, band; uint32_t flags, captures;
    float speed, angular_speed, pitch, interval, next_capture_in, median_depth;
    uint32_t reserved[2];
} ck_guidance;
typedef struct ck_event { int32_t code; int32_t index; double timestamp; float value; uint32_t reserved; const char *text; } ck_event;
typedef struct ck_coverage ck_coverage;
typedef struct ck_coverage_summary {
    uint32_t views, faces_completed; int32_t all_completed;
    float completion, dial_fraction, cell_fraction; uint32_t reserved[2];
} ck_coverage_summary;
ck_status ck_coverage_summarize(ck_coverage_summary *out, const ck_coverage *coverage);

typedef struct ck_dataset ck_dataset;
ck_status ck_dataset_frame_count(uint64_t *count_out, const ck_dataset *dataset);

typedef struct ck_session ck_session;
typedef struct ck_dataset_options {
    uint32_t struct_size; uint32_t depth_png_width; uint32_t depth_png_height; int32_t zlib_level; int32_t png_level;
    uint32_t reserved; double start_time_unix; const char *device_id; const char *device_name; const char *device_type;
    const char *user_name; const char *scene_description; const char *scene_type; const char *color_encoding;
    const char *color_file_extension; int32_t write_mode; uint32_t write_queue_mb; int32_t image_encoding;
    int32_t jpeg_quality; uint32_t image_downscales; uint32_t reserved3;
} ck_dataset_options;
ck_status ck_dataset_options_init_sized(ck_dataset_options *options_out, size_t struct_size);
typedef void (*ck_log_fn)(void *user, int32_t level, const char *message);
typedef struct ck_session_options {
    uint32_t struct_size; int32_t preset; const void *scheduler; const void *coverage; const ck_dataset_options *dataset;
    float storage_warning_minutes; int32_t stream_depth; ck_log_fn log; void *log_user; int32_t log_level;
    uint32_t reserved; int32_t queue_full; uint32_t reserved2;
} ck_session_options;
ck_status ck_session_options_init_sized(ck_session_options *options_out, size_t struct_size, int32_t preset);
typedef struct ck_session_frame {
    uint32_t struct_size; int32_t tracking; double timestamp;
    ck_mat4 pose; ck_intrinsics intrinsics; ck_image image;
    ck_depth_map depth; ck_depth_map confidence; ck_intrinsics depth_intrinsics;
    float sharpness; uint32_t reserved;
    int32_t tracking_reason; float mean_luma; const void *image_chroma; size_t image_chroma_stride;
    void (*image_release)(void *user); void *image_release_user;
} ck_session_frame;
typedef struct ck_session_result {
    int32_t captured; uint32_t pass; uint64_t frame_id; ck_guidance guidance;
    float coverage; float minutes_left; uint32_t events; uint32_t reserved; char image_path[64];
} ck_session_result;
ck_status ck_session_create(ck_session **session_out, const char *dir, const ck_session_options *options, const ck_box *box);
ck_status ck_session_frame_init_sized(ck_session_frame *frame_out, size_t struct_size);
ck_status ck_session_process(ck_session_result *result_out, ck_session *session, const ck_session_frame *frame);
ck_status ck_session_next_event(ck_event *event_out, ck_session *session);
ck_status ck_session_coverage(const ck_coverage **coverage_out, const ck_session *session);
ck_status ck_session_dataset(ck_dataset **dataset_out, ck_session *session);
ck_status ck_session_finish(ck_session *session, uint32_t flags, const char *zip_path);
ck_status ck_session_close(ck_session *session);
]]

-- Constants from the header (ck_base.h, ck_box.h, ck_image.h).
local CK_OK, CK_MISS = 0, 1
local CK_FACE_BACK = 5
local CK_FORMAT_DEPTH_F32, CK_FORMAT_U8 = 1, 4
local CK_IMAGE_FORMAT_RGB8 = 2

-- The frozen layouts: a wrong declaration above must fail here, not corrupt memory.
assert(ffi.sizeof("ck_box") == 36 and ffi.sizeof("ck_hit") == 24 and ffi.sizeof("ck_guidance") == 48)
assert(ffi.sizeof("ck_image") == 32 and ffi.sizeof("ck_session_frame") == 272)

-- By SONAME (what `make install` and ldconfig provide); libcapturekit.so is only the link-time name.
local ck = ffi.load(os.getenv("CAPTUREKIT_LIBRARY") or "libcapturekit.so.0.2")

-- Raises a Lua error with the library's message on a negative status; returns the status.
local function check(status, call)
  if status < 0 then
    error(string.format("%s: %s: %s", call, ffi.string(ck.ck_status_string(status)),
                        ffi.string(ck.ck_last_error_message())), 2)
  end
  return status
end

-- CK_VERSION_COMPATIBLE for the 0.2 header these declarations come from: same major and minor.
local v = ck.ck_version_number()
assert(math.floor(v / 10000) == 0 and math.floor(v / 100) % 100 == 2,
       "library " .. ffi.string(ck.ck_version_string()) .. " does not match these 0.2 declarations")
print("CaptureKit " .. ffi.string(ck.ck_version_string()) .. " from LuaJIT " .. jit.version)

-- 1. A box 2 m in front of a camera at the origin (looking down -z); its +z (back) face faces us.
local box = ffi.new("ck_box")
check(ck.ck_box_init(box, ffi.new("ck_vec3", 0, 0, -2), ffi.new("ck_vec3", 0.6, 0.4, 0.5), 0), "ck_box_init")
local identity = ffi.new("ck_mat4", {{1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1}})
local k = ffi.new("ck_intrinsics", 500, 500, 320, 240, 640, 480)

-- 2. The ray through pixel (370, 200): direction (0.1, 0.08, -1) normalised; it meets the back
--    face (z = -1.75) at 1.75 * |(0.1, 0.08, -1)| metres.
local ray, hit = ffi.new("ck_ray"), ffi.new("ck_hit")
check(ck.ck_ray_from_pixel(ray, identity, k, 370, 200), "ck_ray_from_pixel")
assert(check(ck.ck_ray_box(hit, ray, box), "ck_ray_box") == CK_OK, "the ray must hit the box")
local expected = 1.75 * math.sqrt(0.1 ^ 2 + 0.08 ^ 2 + 1)
print(string.format("ray through (370, 200): face %d at %.4f m, point (%.3f, %.3f, %.3f)",
                    hit.face, hit.distance, hit.point.x, hit.point.y, hit.point.z))
assert(hit.face == CK_FACE_BACK, "expected the back face")
assert(math.abs(hit.distance - expected) < 1e-4, "distance " .. hit.distance .. " ~= " .. expected)
assert(math.abs(hit.point.x - 0.175) < 1e-5 and math.abs(hit.point.y - 0.14) < 1e-5)
-- 100 px further right the ray passes beside the box.
check(ck.ck_ray_from_pixel(ray, identity, k, 470, 240), "ck_ray_from_pixel")
assert(check(ck.ck_ray_box(hit, ray, box), "ck_ray_box") == CK_MISS, "expected a miss")

-- 3. A guided session on the synthetic scene: 60 frames 0.1 s apart, orbiting the target at
--    0.3 m/s; the library renders nothing itself, so the demo renders depth and RGB per frame.
local function look_at(eye, target)
  local f = {target[1] - eye[1], target[2] - eye[2], target[3] - eye[3]}
  local n = math.sqrt(f[1] ^ 2 + f[2] ^ 2 + f[3] ^ 2)
  f = {f[1] / n, f[2] / n, f[3] / n}
  local r = {-f[3], 0, f[1]}
  n = math.sqrt(r[1] ^ 2 + r[3] ^ 2)
  r = {r[1] / n, 0, r[3] / n}
  local u = {r[2] * f[3] - r[3] * f[2], r[3] * f[1] - r[1] * f[3], r[1] * f[2] - r[2] * f[1]}
  return ffi.new("ck_mat4", {{r[1], r[2], r[3], 0, u[1], u[2], u[3], 0, -f[1], -f[2], -f[3], 0,
                              eye[1], eye[2], eye[3], 1}})
end

local dir = arg[1]
if not dir then  -- a fresh name under /tmp: the reserved file goes, its name becomes the folder
  dir = os.tmpname()
  os.remove(dir)
end

local scene_out = ffi.new("ck_scene*[1]")
check(ck.ck_scene_create(scene_out, 7), "ck_scene_create")
local scene = ffi.gc(scene_out[0], ck.ck_scene_free)
local target = ffi.new("ck_box")
check(ck.ck_scene_target(target, scene), "ck_scene_target")
check(ck.ck_box_scale(target, ffi.new("ck_vec3", 1.15, 1.1, 1.15)), "ck_box_scale")

local session_out = ffi.new("ck_session*[1]")
-- Default options, plus the scan's start time that the MultiScan streams need (the library never
-- reads a clock; a fixed time keeps the demo reproducible).
local dataset_options = ffi.new("ck_dataset_options")
check(ck.ck_dataset_options_init_sized(dataset_options, ffi.sizeof("ck_dataset_options")), "ck_dataset_options_init_sized")
dataset_options.start_time_unix = 1795000000
local session_options = ffi.new("ck_session_options")
check(ck.ck_session_options_init_sized(session_options, ffi.sizeof("ck_session_options"), 0), "ck_session_options_init_sized")
session_options.dataset = dataset_options
check(ck.ck_session_create(session_out, dir, session_options, target), "ck_session_create")
local session = session_out[0]

local k_rgb = ffi.new("ck_intrinsics", 130, 130, 80, 60, 160, 120)
local k_depth = ffi.new("ck_intrinsics")
check(ck.ck_intrinsics_scale(k_depth, k_rgb, 64, 48), "ck_intrinsics_scale")
local n_depth = k_depth.width * k_depth.height
local depth, conf = ffi.new("float[?]", n_depth), ffi.new("uint8_t[?]", n_depth)
local rgb_size = k_rgb.width * k_rgb.height * 3
local rgb = ffi.new("uint8_t[?]", rgb_size)
local frame, result, event = ffi.new("ck_session_frame"), ffi.new("ck_session_result"), ffi.new("ck_event")
local captured = 0
for i = 0, 59 do
  local t = i / 10
  local angle = 0.3 / 1.3 * t
  check(ck.ck_session_frame_init_sized(frame, ffi.sizeof("ck_session_frame")), "ck_session_frame_init_sized")
  frame.timestamp = t
  frame.pose = look_at({1.3 * math.sin(angle), 0.6, 1.3 * math.cos(angle)}, {0, 0.25, 0})
  frame.intrinsics = k_rgb
  check(ck.ck_scene_render_depth(depth, conf, n_depth, nil, scene, frame.pose, k_depth, i), "ck_scene_render_depth")
  check(ck.ck_scene_render_rgb(rgb, rgb_size, nil, scene, frame.pose, k_rgb), "ck_scene_render_rgb")
  frame.image = ffi.new("ck_image", rgb, k_rgb.width, k_rgb.height, 0, CK_IMAGE_FORMAT_RGB8, 0)
  frame.depth = ffi.new("ck_depth_map", depth, k_depth.width, k_depth.height, 0, CK_FORMAT_DEPTH_F32, 0)
  frame.confidence = ffi.new("ck_depth_map", conf, k_depth.width, k_depth.height, 0, CK_FORMAT_U8, 0)
  frame.depth_intrinsics = k_depth
  check(ck.ck_session_process(result, session, frame), "ck_session_process")
  if result.captured == 1 then
    captured = captured + 1
    print(string.format("  %4.1f s  captured frame %d (speed %.2f m/s)", t, tonumber(result.frame_id),
                        result.guidance.speed))
  end
  while ck.ck_session_next_event(event, session) == CK_OK do
    print(string.format("  %4.1f s  event %d: %s", event.timestamp, event.code, ffi.string(event.text)))
  end
end
check(ck.ck_session_finish(session, 0, nil), "ck_session_finish")

local coverage_out, summary = ffi.new("const ck_coverage*[1]"), ffi.new("ck_coverage_summary")
check(ck.ck_session_coverage(coverage_out, session), "ck_session_coverage")  -- borrowed: not freed here
check(ck.ck_coverage_summarize(summary, coverage_out[0]), "ck_coverage_summarize")
local dataset_out, count = ffi.new("ck_dataset*[1]"), ffi.new("uint64_t[1]")
check(ck.ck_session_dataset(dataset_out, session), "ck_session_dataset")    -- borrowed too
check(ck.ck_dataset_frame_count(count, dataset_out[0]), "ck_dataset_frame_count")
print(string.format("captured %d frames (dataset: %d), coverage views %d, completion %.0f%%; dataset in %s",
                    captured, tonumber(count[0]), summary.views, 100 * summary.completion, dir))
check(ck.ck_session_close(session), "ck_session_close")

-- Default options: the first capture after 3 s, then one every 2 s in the medium band (0.3 m/s).
assert(captured >= 2 and captured <= 3, "expected 2 or 3 captures, got " .. captured)
assert(tonumber(count[0]) == captured and summary.views == captured)
local transforms = assert(io.open(dir .. "/transforms.json", "r"), "transforms.json missing")
local text = transforms:read("*a")
transforms:close()
local _, frames_in_json = text:gsub('"file_path"', "")
assert(frames_in_json == captured, "transforms.json lists " .. frames_in_json .. " frames")
assert(io.open(dir .. "/images/000000.png", "rb"), "images/000000.png missing"):close()
print("lua demo: all checks passed")
