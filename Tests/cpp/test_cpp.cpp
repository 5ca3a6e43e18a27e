// test_cpp.cpp — the C++17 layer (include/capturekit.hpp) against the built library.
//
// Box and raycast values are checked against expectations computed here from the header's
// conventions (not by calling the library twice); the error path, move semantics and a short
// session on the synthetic scene that writes and finishes a dataset. Built with
// g++ -std=c++17 -Wall -Wextra -Werror -pedantic by `make test-cpp`.
// Usage: test_cpp <scratch-folder>   (the folder is replaced)
#include "capturekit.hpp"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

namespace ck = capturekit;

static const double kPi = 3.14159265358979323846;

static int failures = 0;
static int checks = 0;

#define EXPECT(cond)                                                                 \
    do {                                                                             \
        ++checks;                                                                    \
        if (!(cond)) {                                                               \
            ++failures;                                                              \
            std::fprintf(stderr, "%s:%d: FAILED: %s\n", __FILE__, __LINE__, #cond);  \
        }                                                                            \
    } while (0)

#define EXPECT_NEAR(a, b, tol)                                                                            \
    do {                                                                                                  \
        ++checks;                                                                                         \
        const double a_ = (a), b_ = (b);                                                                  \
        if (!(std::fabs(a_ - b_) <= (tol))) {                                                             \
            ++failures;                                                                                   \
            std::fprintf(stderr, "%s:%d: FAILED: %s = %.9g, expected %s = %.9g (tolerance %g)\n",       \
                         __FILE__, __LINE__, #a, a_, #b, b_, (double)(tol));                             \
        }                                                                                                 \
    } while (0)

// Runs `body`, expects capturekit::error with `status`; returns the error's text.
template <class Body>
static std::string expect_error(ck_status status, Body body, const char *what) {
    ++checks;
    try {
        body();
    } catch (const ck::error &e) {
        if (e.status() != status) {
            ++failures;
            std::fprintf(stderr, "FAILED: %s threw status %d, expected %d (%s)\n", what, e.status(), status, e.what());
        }
        return e.what();
    } catch (const std::exception &e) {
        ++failures;
        std::fprintf(stderr, "FAILED: %s threw a non-capturekit exception: %s\n", what, e.what());
        return "";
    }
    ++failures;
    std::fprintf(stderr, "FAILED: %s did not throw\n", what);
    return "";
}

// ---- box: corners against R_y(yaw) * (signs * size / 2) + centre (header conventions) ----------

static void test_box() {
    const double yaw = 30.0 * kPi / 180.0;
    const ck_vec3 c = {0.5f, 0.25f, -2.0f}, size = {0.6f, 0.4f, 0.5f};
    ck_box box = ck::make_box(c, size, (float)yaw);
    EXPECT_NEAR(box.yaw, yaw, 1e-6);
    EXPECT(box.has_floor == 0);

    // ck_corner order: local signs (-,+,-) (+,+,-) (+,-,-) (-,-,-) (-,+,+) (+,+,+) (+,-,+) (-,-,+).
    static const int signs[8][3] = {{-1, 1, -1}, {1, 1, -1}, {1, -1, -1}, {-1, -1, -1},
                                    {-1, 1, 1},  {1, 1, 1},  {1, -1, 1},  {-1, -1, 1}};
    const std::array<ck_vec3, 8> got = ck::corners(box);
    for (int i = 0; i < 8; i++) {
        const double x = signs[i][0] * size.x / 2.0, y = signs[i][1] * size.y / 2.0, z = signs[i][2] * size.z / 2.0;
        // R_y rows [cos, 0, sin], [0, 1, 0], [-sin, 0, cos].
        EXPECT_NEAR(got[i].x, c.x + std::cos(yaw) * x + std::sin(yaw) * z, 1e-5);
        EXPECT_NEAR(got[i].y, c.y + y, 1e-5);
        EXPECT_NEAR(got[i].z, c.z - std::sin(yaw) * x + std::cos(yaw) * z, 1e-5);
    }
    EXPECT(ck::contains(box, c));
    EXPECT(!ck::contains(box, ck_vec3{c.x + 1.0f, c.y, c.z}));

    // On a floor: the bottom sits on it, centre.y = floor + size.y / 2.
    ck::set_floor(box, -1.0f);
    EXPECT(box.has_floor == 1);
    EXPECT_NEAR(box.center.y, -1.0 + 0.2, 1e-6);
    // The top face moves up 0.1 and the bottom stays on the floor: height 0.5, centre.y -0.75.
    ck::extend_face(box, CK_FACE_TOP, 0.1f);
    EXPECT_NEAR(box.size.y, 0.5, 1e-6);
    EXPECT_NEAR(box.center.y, -0.75, 1e-6);
    ck::rotate_degrees(box, 90.0f);
    EXPECT_NEAR(box.yaw, yaw + kPi / 2.0, 1e-5);
}

// ---- raycast: camera at the origin looking down -z; box in front, its +z (back) face facing us --

static void test_raycast() {
    const ck_mat4 pose = ck::identity();
    const ck_intrinsics k = {500.0f, 500.0f, 320.0f, 240.0f, 640, 480};
    const ck_box box = ck::make_box({0.0f, 0.0f, -2.0f}, {0.6f, 0.4f, 0.5f});
    // look_at: a camera at the origin looking at the box centre is the identity pose.
    const ck_mat4 looking = ck::look_at({0.0f, 0.0f, 0.0f}, box.center);
    for (int i = 0; i < 16; i++) EXPECT_NEAR(looking.m[i], pose.m[i], 1e-7);
    bool refused = false;
    try { ck::look_at({0.0f, 0.0f, 0.0f}, {0.0f, 2.0f, 0.0f}); } catch (const ck::error &e) { refused = e.status() == CK_E_INVALID_ARGUMENT; }
    EXPECT(refused);  // straight up: no horizontal right axis
    const double near_z = 1.75;  // the box's +z face, at z = -2 + 0.25

    // Pixel (u, v) -> camera direction ((u - cx) / fx, -(v - cy) / fy, -1), unit length.
    const float u = 370.0f, v = 200.0f;
    const ck_ray ray = ck::ray_from_pixel(pose, k, u, v);
    const double dx = (u - 320.0) / 500.0, dy = -(v - 240.0) / 500.0, n = std::sqrt(dx * dx + dy * dy + 1.0);
    EXPECT_NEAR(ray.origin.x, 0.0, 1e-7);
    EXPECT_NEAR(ray.direction.x, dx / n, 1e-6);
    EXPECT_NEAR(ray.direction.y, dy / n, 1e-6);
    EXPECT_NEAR(ray.direction.z, -1.0 / n, 1e-6);

    const std::optional<ck_hit> hit = ck::ray_box(ray, box);
    EXPECT(hit.has_value());
    if (hit) {
        EXPECT(hit->face == CK_FACE_BACK);
        EXPECT(hit->inside == 0);
        EXPECT_NEAR(hit->distance, near_z * n, 1e-5);
        EXPECT_NEAR(hit->point.x, near_z * dx, 1e-5);
        EXPECT_NEAR(hit->point.y, near_z * dy, 1e-5);
        EXPECT_NEAR(hit->point.z, -near_z, 1e-5);
    }
    // 100 px right: x = 1.75 * 0.2 = 0.35 > 0.3 at the near face, and only grows further away.
    EXPECT(!ck::ray_box(ck::ray_from_pixel(pose, k, 420.0f, 240.0f), box).has_value());
    // The floor 1 m below: the centre ray is parallel (miss); a ray 100 px down meets it at 5 m.
    EXPECT(!ck::ray_floor(ck::ray_from_pixel(pose, k, 320.0f, 240.0f), -1.0f).has_value());
    const std::optional<ck_hit> floor_hit = ck::ray_floor(ck::ray_from_pixel(pose, k, 320.0f, 340.0f), -1.0f);
    EXPECT(floor_hit.has_value());
    if (floor_hit) EXPECT_NEAR(floor_hit->point.z, -5.0, 1e-4);

    // Every pixel centre: a hit exactly where |1.75 dx| <= 0.3 and |1.75 dy| <= 0.2 (no pixel
    // centre lies within 0.2 px of that edge), always the back face at 1.75 * |d|.
    const ck::grid g = ck::ray_box_grid(pose, k, box);
    EXPECT(g.faces.size() == 640u * 480u);
    std::size_t expected_hits = 0, hits = 0, mismatches = 0;
    for (uint32_t j = 0; j < 480; j++) {
        for (uint32_t i = 0; i < 640; i++) {
            const double px = (i + 0.5 - 320.0) / 500.0, py = -(j + 0.5 - 240.0) / 500.0;
            const bool expect_hit = std::fabs(near_z * px) <= 0.3 && std::fabs(near_z * py) <= 0.2;
            const std::size_t idx = std::size_t(j) * 640 + i;
            expected_hits += expect_hit;
            hits += g.faces[idx] != CK_FACE_NONE;
            if (expect_hit != (g.faces[idx] == CK_FACE_BACK)) mismatches++;
            else if (expect_hit && std::fabs(g.distances[idx] - near_z * std::sqrt(px * px + py * py + 1.0)) > 1e-4)
                mismatches++;
            else if (!expect_hit && !std::isinf(g.distances[idx])) mismatches++;
        }
    }
    EXPECT(expected_hits == 172u * 114u);  // columns 234..405, rows 183..296
    EXPECT(hits == expected_hits);
    EXPECT(mismatches == 0);
}

static std::size_t count_of(const std::string &text, const std::string &needle);

// ---- errors ---------------------------------------------------------------------------------

static void test_errors() {
    // A zero edge: CK_E_INVALID_ARGUMENT, and what() carries the call and the library's message.
    const std::string text = expect_error(
        CK_E_INVALID_ARGUMENT, [] { ck::make_box({0, 0, 0}, {0.0f, 1.0f, 1.0f}); }, "make_box(size 0)");
    EXPECT(text.find("ck_box_init") != std::string::npos);
    EXPECT(text.find("CK_E_INVALID_ARGUMENT") != std::string::npos);
    try {
        ck::make_box({0, 0, 0}, {1.0f, NAN, 1.0f});
        EXPECT(false);
    } catch (const ck::error &e) {
        EXPECT(e.status() == CK_E_INVALID_ARGUMENT);
        EXPECT(!e.message().empty());
        EXPECT(e.message() == ck_last_error_message());
        const std::runtime_error &base = e;  // it is a std::runtime_error
        EXPECT(std::string(base.what()).find(e.message()) != std::string::npos);
        // "CK_E_INVALID_ARGUMENT: ck_box_init: <message>": the status name, then the call once
        // (the library's message starts with the call already).
        EXPECT(e.message().compare(0, 12, "ck_box_init:") == 0);
        EXPECT(std::string(base.what()) == "CK_E_INVALID_ARGUMENT: " + e.message());
        EXPECT(count_of(base.what(), "ck_box_init") == 1);
    }
    // No library message: the status's description, after the call named by the caller.
    EXPECT(std::string(ck::error(CK_E_STATE, "my_call", "").what()) == "CK_E_STATE: my_call: invalid in the current state");
    EXPECT(std::string(ck::error(CK_E_IO, "my_call", "disk full").what()) == "CK_E_IO: my_call: disk full");
    // The bottom face is held on the floor: CK_E_STATE, and the box is unchanged.
    ck_box box = ck::make_box({0, 0.5f, 0}, {1, 1, 1});
    ck::set_floor(box, 0.0f);
    const ck_box before = box;
    expect_error(CK_E_STATE, [&] { ck::extend_face(box, CK_FACE_BOTTOM, 0.1f); }, "extend_face(bottom on floor)");
    EXPECT(std::memcmp(&before, &box, sizeof box) == 0);
    // Options out of range: the scheduler is not created.
    ck_scheduler_options o = ck::scheduler_options();
    o.speed_slow = -1.0f;
    expect_error(CK_E_INVALID_ARGUMENT, [&] { ck::scheduler s(o); }, "scheduler(speed_slow -1)");
    // Special outcomes are not errors: an empty queue is `false`, a miss an empty optional.
    ck::scheduler s;
    ck_event e;
    EXPECT(!s.next_event(e));
    // A view of nothing refuses calls.
    expect_error(CK_E_STATE, [] { ck::coverage_view().summary(); }, "coverage_view().summary()");
    EXPECT(ck::check(CK_MISS, "x") == CK_MISS);
    ck::check_version();
}

// ---- move semantics -------------------------------------------------------------------------

static_assert(!std::is_copy_constructible<ck::scheduler>::value, "handles are move-only");
static_assert(!std::is_copy_assignable<ck::scheduler>::value, "handles are move-only");
static_assert(!std::is_copy_constructible<ck::coverage>::value, "handles are move-only");
static_assert(!std::is_copy_constructible<ck::dataset>::value, "handles are move-only");
static_assert(!std::is_copy_constructible<ck::session>::value, "handles are move-only");
static_assert(!std::is_copy_constructible<ck::scene>::value, "handles are move-only");
static_assert(!std::is_copy_constructible<ck::depth_codec>::value, "handles are move-only");
static_assert(std::is_nothrow_move_constructible<ck::scheduler>::value, "moves do not throw");
static_assert(std::is_nothrow_move_assignable<ck::coverage>::value, "moves do not throw");
static_assert(std::is_nothrow_move_constructible<ck::session>::value, "moves do not throw");
static_assert(std::is_nothrow_move_assignable<ck::dataset>::value, "moves do not throw");
static_assert(std::is_copy_constructible<ck::coverage_view>::value, "views are copyable");
static_assert(std::is_copy_constructible<ck::dataset_ref>::value, "views are copyable");
static_assert(std::is_convertible<std::vector<float> &, ck::span<const float>>::value, "span from vector");
static_assert(!std::is_convertible<const std::vector<float> &, ck::span<float>>::value, "no const dropping");

static void test_move(const std::string &dir) {
    ck::scheduler a;
    ck_scheduler *raw = a.get();
    EXPECT(raw != nullptr);
    ck::scheduler b = std::move(a);
    EXPECT(!a && a.get() == nullptr);  // NOLINT(bugprone-use-after-move): the point of the test
    EXPECT(b.get() == raw);
    expect_error(CK_E_STATE, [&] { a.reset(); }, "moved-from scheduler.reset()");
    ck::scheduler c;
    c = std::move(b);  // c's own scheduler is freed, b's moves in
    EXPECT(c.get() == raw && !b);
    ck::scheduler &same = c;  // through a reference: clang's -Wself-move rejects the direct form
    c = std::move(same);      // self-move keeps it
    EXPECT(c.get() == raw);
    ck_scheduler_frame f = ck::scheduler_frame();
    f.timestamp = 1.0;
    const ck_guidance g = c.update(f);
    EXPECT(g.capture == 0 && g.captures == 0);

    const ck_box box = ck::make_box({0, 0.3f, 0}, {0.5f, 0.6f, 0.4f});
    ck::coverage cov1(box);
    ck::coverage cov2 = std::move(cov1);
    EXPECT(!cov1 && cov2);
    EXPECT(cov2.summary().views == 0);

    // A dataset moved twice is closed once, by its last owner; the folder is then resumable.
    {
        ck::dataset d1 = ck::dataset::create(dir + "/moved-dataset");
        ck::dataset d2 = std::move(d1);
        ck::dataset d3 = ck::dataset::create(dir + "/other-dataset");
        d3 = std::move(d2);  // closes other-dataset, takes moved-dataset
        EXPECT(!d1 && !d2 && d3);
        EXPECT(d3.frame_count() == 0);
        d3.close();
        EXPECT(!d3);
        d3.close();  // closing an empty object: ck_dataset_close(NULL) is CK_OK
    }
    ck::dataset reopened = ck::dataset::open(dir + "/moved-dataset");
    EXPECT(reopened.frame_count() == 0);
    reopened.cancel();
    EXPECT(!reopened);
    expect_error(CK_E_EXISTS, [&] { ck::dataset::create(dir + "/other-dataset"); }, "create in a used folder");

    ck::depth_codec codec1;
    ck::depth_codec codec2(std::move(codec1));
    std::vector<float> depth(8 * 6, 1.25f);
    const std::vector<uint8_t> encoded = codec2.encode(ck::depth_view(depth, 8, 6));
    std::vector<float> back(depth.size());
    const std::size_t n = codec2.decode(
        ck::span<uint8_t>(reinterpret_cast<uint8_t *>(back.data()), back.size() * sizeof(float)), encoded,
        CK_FORMAT_DEPTH_F32);
    EXPECT(n == back.size() * sizeof(float));
    EXPECT(back == depth);  // 1.25 is exact in float16
    expect_error(CK_E_STATE, [&] { codec1.encode(ck::depth_view(depth, 8, 6)); }, "moved-from codec");
}

// ---- a short session on the synthetic scene ----------------------------------------------------

static ck_mat4 look_at(const float eye[3], const float target[3]) {
    float f[3], r[3], u[3];
    for (int i = 0; i < 3; i++) f[i] = target[i] - eye[i];
    float n = std::sqrt(f[0] * f[0] + f[1] * f[1] + f[2] * f[2]);
    for (float &x : f) x /= n;
    r[0] = -f[2]; r[1] = 0; r[2] = f[0];
    n = std::sqrt(r[0] * r[0] + r[2] * r[2]);
    r[0] /= n; r[2] /= n;
    u[0] = r[1] * f[2] - r[2] * f[1]; u[1] = r[2] * f[0] - r[0] * f[2]; u[2] = r[0] * f[1] - r[1] * f[0];
    ck_mat4 m = {};
    for (int i = 0; i < 3; i++) { m.m[i] = r[i]; m.m[4 + i] = u[i]; m.m[8 + i] = -f[i]; m.m[12 + i] = eye[i]; }
    m.m[15] = 1;
    return m;
}

static std::size_t count_of(const std::string &text, const std::string &needle) {
    std::size_t n = 0;
    for (std::size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) n++;
    return n;
}

static void test_session(const std::string &dir) {
    ck::scene scene(7);
    ck_box box = scene.target();
    EXPECT(box.has_floor == 1);
    EXPECT_NEAR(box.floor, 0.0, 1e-6);
    ck::scale(box, ck_vec3{1.15f, 1.1f, 1.15f});

    const ck_intrinsics k = {260.0f, 260.0f, 160.0f, 120.0f, 320, 240};
    const ck_intrinsics kd = ck::scale(k, 128, 96);
    EXPECT_NEAR(kd.fx, 260.0 * 128 / 320, 1e-4);

    ck_scheduler_options sched = ck::scheduler_options();
    sched.interval_slow = 1.2f;
    sched.interval_medium = 0.8f;
    sched.interval_fast = 0.5f;
    ck_dataset_options data = ck::dataset_options();
    data.start_time_unix = 1795000000.0;
    data.device_id = "cpp-test";
    data.write_mode = CK_WRITE_MODE_SYNC;
    ck_session_options opts = ck::session_options();
    opts.scheduler = &sched;
    opts.dataset = &data;
    opts.queue_full = CK_QUEUE_FULL_WAIT;

    ck::session s(dir + "/session", opts, box);
    std::vector<float> depth(std::size_t(kd.width) * kd.height);
    std::vector<uint8_t> conf(depth.size()), rgb(std::size_t(k.width) * k.height * 3);
    const double fps = 10.0;
    const int frames = 100;  // 10 s of orbit at 0.3 m/s on a 1.3 m radius
    uint32_t captured = 0, events = 0;
    float last_coverage = 0.0f;
    for (int i = 0; i < frames; i++) {
        const double t = i / fps, angle = 0.3 / 1.3 * t;
        const float eye[3] = {(float)(1.3 * std::sin(angle)), 0.6f, (float)(1.3 * std::cos(angle))};
        const float target[3] = {0.0f, 0.25f, 0.0f};
        ck_session_frame f = ck::session_frame();
        f.timestamp = t;
        f.pose = look_at(eye, target);
        f.intrinsics = k;
        scene.render_depth(depth, conf, f.pose, kd, (uint64_t)i);
        scene.render_rgb(rgb, f.pose, k);
        f.depth = ck::depth_view(depth, kd.width, kd.height);
        f.confidence = ck::confidence_view(conf, kd.width, kd.height);
        f.depth_intrinsics = kd;
        f.image = ck::image_view(rgb.data(), k.width, k.height, CK_IMAGE_FORMAT_RGB8);
        const ck_session_result r = s.process(f);
        if (r.captured) {
            EXPECT(r.frame_id == captured);  // the library wrote the pixels: ids 0, 1, 2 ...
            captured++;
        }
        EXPECT(r.guidance.captures == captured);
        EXPECT(r.coverage >= last_coverage);
        last_coverage = r.coverage;
        events += (uint32_t)s.events().size();
    }
    std::printf("session: %d frames, %u captured, %u events, coverage %.0f%%\n", frames, captured, events,
                100.0 * last_coverage);
    // First capture after 3 s, then about one every 0.8 s (medium band, 0.3 m/s; frames 0.1 s apart).
    EXPECT(captured >= 8 && captured <= 10);

    ck::dataset_ref d = s.dataset();
    s.flush();
    EXPECT(d.frame_count() == captured);
    const ck_coverage_summary sum = s.coverage().summary();
    EXPECT(sum.views == captured);
    EXPECT(s.coverage().dial().size() == 2u * 24u);
    EXPECT(s.coverage().cells().size() == 6u * 4u * 4u);
    // A borrowed dataset is not the caller's to close: the C API refuses with CK_E_STATE.
    EXPECT(ck_dataset_close(d.get()) == CK_E_STATE);
    s.finish();
    s.close();
    EXPECT(!s);

    std::ifstream in(dir + "/session/transforms.json");
    EXPECT(in.good());
    const std::string json((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    EXPECT(count_of(json, "\"file_path\"") == captured);
    EXPECT(std::ifstream(dir + "/session/images/000000.png").good());
    EXPECT(std::ifstream(dir + "/session/depth/000000.png").good());
    EXPECT(std::ifstream(dir + "/session/boundingbox.json").good());

    // The session's MultiScan streams read back with ck::scan: every frame, and the last one is
    // the last frame's depth (float16 in the stream) and confidence.
    ck::scan sc(dir + "/session");
    EXPECT(sc.info().kind == CK_SCAN_KIND_MULTISCAN && sc.size() == (uint64_t)frames && sc.info().has_confidence == 1);
    EXPECT(sc.info().depth_width == kd.width && sc.info().depth_height == kd.height);
    EXPECT_NEAR(sc.frame(99).timestamp, 9.9, 1e-9);
    EXPECT(sc.frame(99).intrinsics.width == k.width);  // the colour camera's
    const std::vector<float> back = sc.depth(99);
    std::size_t off = 0;
    for (std::size_t i = 0; i < back.size(); i++)
        if (std::fabs(back[i] - depth[i]) > depth[i] * (1.0f / 1024.0f)) off++;
    EXPECT(off == 0);
    EXPECT(sc.confidence(99) == conf);
    ck::scan moved = std::move(sc);
    EXPECT(!sc && moved);
    moved.close();
    EXPECT(!moved);
    try {
        ck::scan missing(dir + "/no-such-scan");
        EXPECT(false);
    } catch (const ck::error &e) {
        EXPECT(e.status() == CK_E_NOT_FOUND);
    }
}

// ---- a session with nothing but a folder ---------------------------------------------------------

// `ck::session s(dir)`: no options, so this layer supplies the dataset's start time (now), as the
// Python binding does. Frames with depth are streamed (the default), which needs that time.
static void test_session_defaults(const std::string &dir) {
    const std::time_t before = std::time(nullptr);
    ck::session s(dir + "/defaults");
    ck::scene scene(3);
    const ck_session_options only_preset = ck::session_options(CK_PRESET_ROOM_SCAN);  // its dataset: nullptr
    ck::session(dir + "/defaults-options", &only_preset).close();
    const ck_intrinsics k = {260.0f, 260.0f, 160.0f, 120.0f, 320, 240};
    const ck_intrinsics kd = ck::scale(k, 128, 96);
    std::vector<float> depth(std::size_t(kd.width) * kd.height);
    std::vector<uint8_t> conf(depth.size());
    const int frames = 5;
    for (int i = 0; i < frames; i++) {
        const float eye[3] = {0.2f * (float)i, 0.6f, 1.3f};
        const float target[3] = {0.0f, 0.25f, 0.0f};
        ck_session_frame f = ck::session_frame();
        f.timestamp = 0.1 * i;
        f.pose = look_at(eye, target);
        f.intrinsics = k;
        scene.render_depth(depth, conf, f.pose, kd, (uint64_t)i);
        f.depth = ck::depth_view(depth, kd.width, kd.height);
        f.confidence = ck::confidence_view(conf, kd.width, kd.height);
        f.depth_intrinsics = kd;
        s.process(f);
    }
    s.finish();
    s.close();
    const std::time_t after = std::time(nullptr);
    ck::scan sc(dir + "/defaults");
    EXPECT(sc.size() == (uint64_t)frames && sc.info().depth_frame_count == (uint64_t)frames);
    // The scan's id is its start time (UTC, to the second): the clock's while the session was
    // created, so <id>_capturekit.json exists for one second between `before` and `after`.
    std::string id;
    for (std::time_t t = before; t <= after && id.empty(); t++) {
        char name[32];
        std::strftime(name, sizeof name, "%Y%m%dT%H%M%S+0000", std::gmtime(&t));
        if (std::ifstream(dir + "/defaults/" + name + "_capturekit.json").good()) id = name;
    }
    EXPECT(!id.empty());
    std::printf("session from a folder alone: %d frames streamed, scan id %s (now)\n", frames, id.c_str());
}

/* The surface map: a flat wall of depth in front of the camera fills the front side of the box;
 * RAII move, views, PLY export, errors as exceptions. */
static void test_surface(const std::string &dir) {
    const ck_box box = ck::make_box({0, 0.5f, 0}, {0.5f, 0.5f, 0.5f});
    ck::surface s1(box);
    ck::surface s = std::move(s1);
    EXPECT(!s1 && s);
    const ck_intrinsics k = {100.0f, 100.0f, 32.0f, 24.0f, 64, 48};
    std::vector<float> depth(64 * 48, 0.8f);  // a wall 0.8 m away: the plane z = -0.2 in the box
    ck_depth_map dm = {};
    dm.data = depth.data();
    dm.width = 64;
    dm.height = 48;
    dm.format = CK_FORMAT_DEPTH_F32;
    ck_mat4 pose = {{1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0.5f, 0.6f, 1}};
    s.fuse(dm, nullptr, k, pose, 0.0);
    EXPECT(s.add_view(pose, k, nullptr, 0.0) > 0);
    const ck_surface_figures f = s.figures();
    EXPECT(f.from_depth == 1 && f.frames_fused == 1 && f.views == 1);
    EXPECT(s.side(CK_FACE_BACK).observed > 0);  // the camera is at +z: the wall faces the back
    EXPECT(s.view().elements().size() == s.view().grid().elements);
    // The next-best view from the wall's side: a target on the rings, looking at the box centre.
    const ck_surface_view v = s.next_view(pose, &k);
    EXPECT(v.struct_size == sizeof(ck_surface_view) && v.candidates == 48 && v.text != nullptr);
    EXPECT(std::fabs(v.distance - std::sqrt(0.6f * 0.6f)) < 1e-3f || v.distance > 0.6f);
    const ck_intrinsics bad_k = {-1.0f, 100.0f, 32.0f, 24.0f, 64, 48};
    expect_error(CK_E_INVALID_ARGUMENT, [&] { s.next_view(pose, &bad_k); }, "next_view with bad intrinsics");
    const std::string path = dir + "/surface.ply";
    s.export_ply(path.c_str());
    expect_error(CK_E_EXISTS, [&] { s.export_ply(path.c_str()); }, "export_ply over an existing file");
    expect_error(CK_E_INVALID_ARGUMENT, [&] { s.side(9); }, "side(9)");
    expect_error(CK_E_STATE, [&] { s1.reset(); }, "moved-from surface.reset()");
    // A view with an image colours the wall: a dataset given the map writes sparse_pc.ply.
    std::vector<uint8_t> rgb(64 * 48 * 3, 90);
    ck_image img = {};
    img.data = rgb.data();
    img.width = 64;
    img.height = 48;
    img.format = CK_IMAGE_FORMAT_RGB8;
    EXPECT(s.add_view(pose, k, &img, 1.0) > 0);
    ck::dataset ds = ck::dataset::create(dir + "/splat");
    ds.set_surface(s.view());
    ds.finalize();
    EXPECT(std::ifstream(dir + "/splat/sparse_pc.ply").good());
    ds.set_surface(ck::surface_view());
    ds.finalize();
    EXPECT(!std::ifstream(dir + "/splat/sparse_pc.ply").good());
}

int main(int argc, char **argv) {
    if (argc != 2) {
        std::fprintf(stderr, "usage: test_cpp <scratch-folder>\n");
        return 2;
    }
    const std::string dir = argv[1];
    if (std::system(("rm -rf '" + dir + "' && mkdir -p '" + dir + "'").c_str()) != 0) return 2;
    try {
        ck::check_version();
        std::printf("CaptureKit %s, C++ layer (header %s)\n", ck::version_string(), CK_VERSION_STRING);
        test_box();
        test_raycast();
        test_errors();
        test_move(dir);
        test_session(dir);
        test_session_defaults(dir);
        test_surface(dir);
    } catch (const ck::error &e) {
        std::fprintf(stderr, "unexpected capturekit::error (status %d): %s\n", e.status(), e.what());
        return 1;
    }
    std::printf("test_cpp: %d checks, %d failed\n", checks, failures);
    return failures ? 1 : 0;
}
