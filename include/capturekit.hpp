/*
 * capturekit.hpp — a header-only C++17 layer over CaptureKit's C API (<capturekit.h>).
 *
 * Nothing here is compiled into the library: the ABI stays the C one, and this file may change
 * without an ABI change. It adds, and only adds:
 *   - capturekit::error, a std::runtime_error carrying the ck_status and ck_last_error_message(),
 *     thrown by every wrapper whose C call returns a negative status (capturekit::check);
 *   - move-only RAII classes for the handles (scheduler, coverage, dataset, session, scene,
 *     depth_codec, depth_writer, depth_reader, scan): a moved-from object holds nothing, and the
 *     destructor releases the handle exactly once;
 *   - non-owning views for the handles a session lends (coverage_view from session::coverage(),
 *     dataset_ref from session::dataset()): they never free anything and are valid while the
 *     session is;
 *   - capturekit::span<T>, a minimal C++17 stand-in for std::span (pointer + count), built from
 *     std::vector, std::array and C arrays;
 *   - thin functions over the value types, which stay the C structs (ck_box, ck_mat4, ck_ray ...).
 * Normal special outcomes are not errors: a ray that misses gives an empty std::optional, an
 * empty event queue gives false. Thread safety is the C API's: one thread per handle at a time.
 * Call capturekit::check_version() once at startup. Since 0.2.
 */
#ifndef CAPTUREKIT_HPP
#define CAPTUREKIT_HPP

#include "capturekit.h"

#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace capturekit {

/* ---- errors ------------------------------------------------------------------------------- */

/** A failed C call: status() is the negative ck_status, message() the library's detail text
 *  (ck_last_error_message() at the time of the failure); what() joins the call, both and the name. */
class error : public std::runtime_error {
public:
    error(ck_status status, const std::string &call, const std::string &message)
        : std::runtime_error(describe(status, call, message)), status_(status), message_(message) {}
    ck_status status() const noexcept { return status_; }
    const std::string &message() const noexcept { return message_; }

private:
    /* what(): "CK_E_INVALID_ARGUMENT: ck_box_set_size: <message>", the call named once (the
     * library's messages start with it already), or the status's description when there is none. */
    static std::string describe(ck_status status, const std::string &call, const std::string &message) {
        const std::string full = ck_status_string(status);  // "CK_E_X: description"
        const std::size_t colon = full.find(": ");
        const std::string name = full.substr(0, colon);
        if (message.empty())
            return name + ": " + call + (colon == std::string::npos ? "" : full.substr(colon));
        if (message.compare(0, call.size() + 1, call + ":") == 0) return name + ": " + message;
        return name + ": " + call + ": " + message;
    }

    ck_status status_;
    std::string message_;
};

/** Returns `status` when it is not an error (CK_OK, CK_MISS, CK_END); throws capturekit::error with
 *  the thread's last error message when it is negative. `call` names the C function. */
inline ck_status check(ck_status status, const char *call) {
    if (status < 0) throw error(status, call, ck_last_error_message());
    return status;
}

/** Throws capturekit::error (CK_E_UNSUPPORTED) unless the loaded library can serve this header
 *  (CK_VERSION_COMPATIBLE(ck_version_number())). Call once at startup. */
inline void check_version() {
    const uint32_t n = ck_version_number();
    if (!CK_VERSION_COMPATIBLE(n))
        throw error(CK_E_UNSUPPORTED, "capturekit::check_version",
                    std::string("library ") + ck_version_string() + " does not serve header " CK_VERSION_STRING);
}

/** The loaded library's version string (CK_VERSION_STRING of the header it was built with). */
inline const char *version_string() noexcept { return ck_version_string(); }

/* ---- span --------------------------------------------------------------------------------- */

/** A borrowed run of `size()` elements at `data()` (std::span's shape, C++17). Cheap to copy; it
 *  never owns. span<const T> is built from const and non-const containers, span<T> from non-const. */
template <class T>
class span {
    template <class U>
    using compatible = std::enable_if_t<std::is_convertible<U (*)[], T (*)[]>::value, int>;

public:
    using element_type = T;
    using value_type = std::remove_cv_t<T>;

    constexpr span() noexcept = default;
    constexpr span(T *data, std::size_t size) noexcept : data_(data), size_(size) {}
    template <std::size_t N>
    constexpr span(T (&array)[N]) noexcept : data_(array), size_(N) {}
    template <class U, std::size_t N, compatible<U> = 0>
    constexpr span(std::array<U, N> &array) noexcept : data_(array.data()), size_(N) {}
    template <class U, std::size_t N, compatible<const U> = 0>
    constexpr span(const std::array<U, N> &array) noexcept : data_(array.data()), size_(N) {}
    template <class U, class A, compatible<U> = 0>
    span(std::vector<U, A> &vector) noexcept : data_(vector.data()), size_(vector.size()) {}
    template <class U, class A, compatible<const U> = 0>
    span(const std::vector<U, A> &vector) noexcept : data_(vector.data()), size_(vector.size()) {}
    template <class U, compatible<U> = 0>
    constexpr span(const span<U> &other) noexcept : data_(other.data()), size_(other.size()) {}

    constexpr T *data() const noexcept { return data_; }
    constexpr std::size_t size() const noexcept { return size_; }
    constexpr bool empty() const noexcept { return size_ == 0; }
    constexpr T *begin() const noexcept { return data_; }
    constexpr T *end() const noexcept { return data_ + size_; }
    constexpr T &operator[](std::size_t i) const noexcept { return data_[i]; }

private:
    T *data_ = nullptr;
    std::size_t size_ = 0;
};

/* ---- value types: geometry, box, raycast ------------------------------------------------------ */

/** The 4x4 identity (a camera at the origin looking down -z). */
inline ck_mat4 identity() noexcept {
    return ck_mat4{{1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1}};
}

/** A rigid pose from a rotation quaternion and a translation (ck_pose_from_quat). */
inline ck_mat4 pose_from_quat(ck_quat rotation, ck_vec3 translation) {
    ck_mat4 m;
    check(ck_pose_from_quat(&m, rotation, translation), "ck_pose_from_quat");
    return m;
}

/** The camera-to-world pose of a camera at `eye` looking at `target`, +y as close to `up` as the
 *  view allows (ck_pose_look_at). */
inline ck_mat4 look_at(ck_vec3 eye, ck_vec3 target, ck_vec3 up = ck_vec3{0.0f, 1.0f, 0.0f}) {
    ck_mat4 m;
    check(ck_pose_look_at(&m, eye, target, up), "ck_pose_look_at");
    return m;
}

/** The inverse of a rigid pose (ck_pose_inverse). */
inline ck_mat4 pose_inverse(const ck_mat4 &pose) {
    ck_mat4 m;
    check(ck_pose_inverse(&m, &pose), "ck_pose_inverse");
    return m;
}

/** a * b (ck_mat4_multiply). */
inline ck_mat4 multiply(const ck_mat4 &a, const ck_mat4 &b) {
    ck_mat4 m;
    check(ck_mat4_multiply(&m, &a, &b), "ck_mat4_multiply");
    return m;
}

/** Intrinsics rescaled to width x height (ck_intrinsics_scale). */
inline ck_intrinsics scale(const ck_intrinsics &k, uint32_t width, uint32_t height) {
    ck_intrinsics out;
    check(ck_intrinsics_scale(&out, &k, width, height), "ck_intrinsics_scale");
    return out;
}

/** A box from centre, size and yaw, no floor (ck_box_init). */
inline ck_box make_box(ck_vec3 center, ck_vec3 size, float yaw = 0.0f) {
    ck_box b;
    check(ck_box_init(&b, center, size, yaw), "ck_box_init");
    return b;
}

/** The 8 corners in ck_corner order (ck_box_corners). */
inline std::array<ck_vec3, 8> corners(const ck_box &box) {
    std::array<ck_vec3, 8> c;
    check(ck_box_corners(c.data(), &box), "ck_box_corners");
    return c;
}

/** True if the point is inside the closed box (ck_box_contains). */
inline bool contains(const ck_box &box, ck_vec3 point) {
    int32_t inside = 0;
    check(ck_box_contains(&inside, &box, point), "ck_box_contains");
    return inside != 0;
}

/* Box edits: each changes `box` in place or throws and leaves it unchanged (the C rule). */
inline void set_floor(ck_box &box, float floor_y) { check(ck_box_set_floor(&box, floor_y), "ck_box_set_floor"); }
inline void translate(ck_box &box, ck_vec3 delta) { check(ck_box_translate(&box, delta), "ck_box_translate"); }
inline void rotate_degrees(ck_box &box, float degrees) {
    check(ck_box_rotate_degrees(&box, degrees), "ck_box_rotate_degrees");
}
inline void set_size(ck_box &box, ck_vec3 size) { check(ck_box_set_size(&box, size), "ck_box_set_size"); }
inline void scale(ck_box &box, ck_vec3 factors) { check(ck_box_scale(&box, factors), "ck_box_scale"); }
inline void extend_face(ck_box &box, int32_t face, float distance) {
    check(ck_box_extend_face(&box, face, distance), "ck_box_extend_face");
}

/** The world ray through pixel (u, v) (ck_ray_from_pixel). */
inline ck_ray ray_from_pixel(const ck_mat4 &pose, const ck_intrinsics &k, float u, float v) {
    ck_ray r;
    check(ck_ray_from_pixel(&r, &pose, &k, u, v), "ck_ray_from_pixel");
    return r;
}

/** Ray vs box (ck_ray_box): the hit, or std::nullopt on CK_MISS. */
inline std::optional<ck_hit> ray_box(const ck_ray &ray, const ck_box &box) {
    ck_hit h;
    if (check(ck_ray_box(&h, &ray, &box), "ck_ray_box") == CK_MISS) return std::nullopt;
    return h;
}

/** Ray vs the floor y = floor_y (ck_ray_floor): the hit, or std::nullopt on CK_MISS. */
inline std::optional<ck_hit> ray_floor(const ck_ray &ray, float floor_y) {
    ck_hit h;
    if (check(ck_ray_floor(&h, &ray, floor_y), "ck_ray_floor") == CK_MISS) return std::nullopt;
    return h;
}

/** Ray vs a plane (ck_ray_plane): the hit, or std::nullopt on CK_MISS. */
inline std::optional<ck_hit> ray_plane(const ck_ray &ray, ck_vec3 point, ck_vec3 normal) {
    ck_hit h;
    if (check(ck_ray_plane(&h, &ray, point, normal), "ck_ray_plane") == CK_MISS) return std::nullopt;
    return h;
}

/** Per-pixel faces (CK_FACE_NONE on a miss) and distances (+inf on a miss) of ck_ray_box_grid. */
struct grid {
    std::vector<int32_t> faces;
    std::vector<float> distances;
};

/** Casts a ray through the centre of every pixel of k's width x height image (ck_ray_box_grid). */
inline grid ray_box_grid(const ck_mat4 &pose, const ck_intrinsics &k, const ck_box &box) {
    grid g;
    const std::size_t n = std::size_t(k.width) * k.height;
    g.faces.resize(n);
    g.distances.resize(n);
    check(ck_ray_box_grid(g.faces.data(), g.distances.data(), n, nullptr, &pose, &k, &box), "ck_ray_box_grid");
    return g;
}

/** Tap to place (ck_box_place_at_pixel): stands the box where the pixel's ray meets its floor;
 *  the floor hit, or std::nullopt on CK_MISS (box unchanged). */
inline std::optional<ck_hit> place_at_pixel(ck_box &box, const ck_mat4 &pose, const ck_intrinsics &k, float u,
                                            float v) {
    ck_hit h;
    if (check(ck_box_place_at_pixel(&h, &box, &pose, &k, u, v), "ck_box_place_at_pixel") == CK_MISS)
        return std::nullopt;
    return h;
}

/* ---- buffer descriptors ------------------------------------------------------------------- */

/** A ck_image over tightly packed pixels (borrowed: the pixels must outlive the call it is given to). */
inline ck_image image_view(const void *pixels, uint32_t width, uint32_t height, int32_t format) noexcept {
    return ck_image{pixels, width, height, 0, format, 0u};
}

/** A ck_depth_map of float metres over a width x height span (borrowed). */
inline ck_depth_map depth_view(span<const float> metres, uint32_t width, uint32_t height) noexcept {
    return ck_depth_map{metres.data(), width, height, 0, CK_FORMAT_DEPTH_F32, 0u};
}

/** A ck_depth_map of uint8 confidence over a width x height span (borrowed). */
inline ck_depth_map confidence_view(span<const uint8_t> confidence, uint32_t width, uint32_t height) noexcept {
    return ck_depth_map{confidence.data(), width, height, 0, CK_FORMAT_U8, 0u};
}

/* ---- option and frame defaults (the C _init functions) -------------------------------------- */

inline ck_scheduler_options scheduler_options(int32_t preset = CK_PRESET_OBJECT_CAPTURE) {
    ck_scheduler_options o;
    check(ck_scheduler_options_preset(&o, preset), "ck_scheduler_options_preset");
    return o;
}
inline ck_coverage_options coverage_options() {
    ck_coverage_options o;
    check(ck_coverage_options_init(&o), "ck_coverage_options_init");
    return o;
}
inline ck_dataset_options dataset_options() {
    ck_dataset_options o;
    check(ck_dataset_options_init(&o), "ck_dataset_options_init");
    return o;
}
inline ck_session_options session_options(int32_t preset = CK_PRESET_OBJECT_CAPTURE) {
    ck_session_options o;
    check(ck_session_options_init(&o, preset), "ck_session_options_init");
    return o;
}
inline ck_scheduler_frame scheduler_frame() {
    ck_scheduler_frame f;
    check(ck_scheduler_frame_init(&f), "ck_scheduler_frame_init");
    return f;
}
inline ck_session_frame session_frame() {
    ck_session_frame f;
    check(ck_session_frame_init(&f), "ck_session_frame_init");
    return f;
}
inline ck_frame_desc frame_desc() {
    ck_frame_desc d;
    check(ck_frame_desc_init(&d), "ck_frame_desc_init");
    return d;
}

/* ---- handle machinery ----------------------------------------------------------------------- */

namespace detail {
/* Seconds since 1970 UTC (system_clock's epoch on every supported platform; C++20 specifies it). */
inline double unix_now() {
    return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

/** Owns one C handle: move-only, releases it once with Release (a _free or _close whose status
 *  is dropped: destructors never throw; call the class's close() to see it). */
template <class T, class Release>
class owner {
public:
    owner() noexcept = default;
    explicit owner(T *p) noexcept : p_(p) {}
    owner(const owner &) = delete;
    owner &operator=(const owner &) = delete;
    owner(owner &&o) noexcept : p_(std::exchange(o.p_, nullptr)) {}
    owner &operator=(owner &&o) noexcept {
        if (this != &o) {
            reset();
            p_ = std::exchange(o.p_, nullptr);
        }
        return *this;
    }
    ~owner() { reset(); }

    T *get() const noexcept { return p_; }
    T *release() noexcept { return std::exchange(p_, nullptr); }
    void reset() noexcept {
        if (p_) Release{}(std::exchange(p_, nullptr));
    }

private:
    T *p_ = nullptr;
};

template <class T, void (*Free)(T *)>
struct free_with {
    void operator()(T *p) const noexcept { Free(p); }
};
template <class T, ck_status (*Close)(T *)>
struct close_with {
    void operator()(T *p) const noexcept { (void)Close(p); }
};

/** Throws CK_E_STATE for a call on an empty (moved-from, closed or default) object. */
template <class T>
T *live(T *p, const char *call) {
    if (!p) throw error(CK_E_STATE, call, "the object is empty (moved from or closed)");
    return p;
}

/** Drains an event queue read by `next` into a vector. */
template <class Next>
std::vector<ck_event> drain(Next next) {
    std::vector<ck_event> events;
    ck_event e;
    while (next(e)) events.push_back(e);
    return events;
}

}  // namespace detail

/* ---- scheduler ------------------------------------------------------------------------------ */

/** A capture scheduler (ck_scheduler): paces capture by the camera's motion and runs the gates. */
class scheduler {
public:
    /** ck_scheduler_create; options may be nullptr (the object-capture defaults). */
    explicit scheduler(const ck_scheduler_options *options = nullptr) {
        ck_scheduler *p = nullptr;
        check(ck_scheduler_create(&p, options), "ck_scheduler_create");
        h_ = handle(p);
    }
    explicit scheduler(const ck_scheduler_options &options) : scheduler(&options) {}

    ck_scheduler *get() const noexcept { return h_.get(); }
    explicit operator bool() const noexcept { return h_.get() != nullptr; }

    /** ck_scheduler_update: the guidance for one frame. */
    ck_guidance update(const ck_scheduler_frame &frame) {
        ck_guidance g;
        check(ck_scheduler_update(&g, detail::live(get(), "ck_scheduler_update"), &frame), "ck_scheduler_update");
        return g;
    }
    /** ck_scheduler_next_event: true with the oldest event, false when the queue is empty. */
    bool next_event(ck_event &event) {
        return check(ck_scheduler_next_event(&event, detail::live(get(), "ck_scheduler_next_event")),
                     "ck_scheduler_next_event") == CK_OK;
    }
    /** Every queued event, oldest first (the queue is then empty). */
    std::vector<ck_event> events() { return detail::drain([this](ck_event &e) { return next_event(e); }); }
    /** ck_scheduler_reset. */
    void reset() { check(ck_scheduler_reset(detail::live(get(), "ck_scheduler_reset")), "ck_scheduler_reset"); }

private:
    using handle = detail::owner<ck_scheduler, detail::free_with<ck_scheduler, ck_scheduler_free>>;
    handle h_;
};

/* ---- coverage ------------------------------------------------------------------------------- */

/** A non-owning, read-only view of a coverage counter (one lent by session::coverage(), or
 *  coverage::view()): valid while its owner is; never frees it. */
class coverage_view {
public:
    coverage_view() noexcept = default;
    explicit coverage_view(const ck_coverage *p) noexcept : p_(p) {}
    const ck_coverage *get() const noexcept { return p_; }
    explicit operator bool() const noexcept { return p_ != nullptr; }

    /** ck_coverage_summarize. */
    ck_coverage_summary summary() const {
        ck_coverage_summary s;
        check(ck_coverage_summarize(&s, detail::live(p_, "ck_coverage_summarize")), "ck_coverage_summarize");
        return s;
    }
    /** ck_coverage_face: one face's coverage (face 0..5, a ck_face). */
    ck_face_coverage face(int32_t face) const {
        ck_face_coverage f;
        check(ck_coverage_face(&f, detail::live(p_, "ck_coverage_face"), face), "ck_coverage_face");
        return f;
    }
    /** ck_coverage_cells: 6 * n * n per-cell counts. */
    std::vector<uint32_t> cells() const { return read(ck_coverage_cells, "ck_coverage_cells"); }
    /** ck_coverage_dial: rings * bins view counts, ring-major. */
    std::vector<uint32_t> dial() const { return read(ck_coverage_dial, "ck_coverage_dial"); }
    /** ck_coverage_suggest: where to go next from `camera_pose`. */
    ck_coverage_hint suggest(const ck_mat4 &camera_pose) const {
        ck_coverage_hint h;
        check(ck_coverage_suggest(&h, detail::live(p_, "ck_coverage_suggest"), &camera_pose), "ck_coverage_suggest");
        return h;
    }

private:
    using reader = ck_status (*)(uint32_t *, std::size_t, std::size_t *, const ck_coverage *);
    std::vector<uint32_t> read(reader fn, const char *call) const {
        std::size_t n = 0;
        const ck_status s = fn(nullptr, 0, &n, detail::live(p_, call));  // asks for the size
        if (s != CK_E_BUFFER_TOO_SMALL) check(s, call);
        std::vector<uint32_t> v(n);
        check(fn(v.data(), v.size(), &n, p_), call);
        return v;
    }
    const ck_coverage *p_ = nullptr;
};

/** An owned coverage counter (ck_coverage) bound to a box. */
class coverage {
public:
    /** ck_coverage_create for `box` (copied); options may be nullptr (defaults). */
    explicit coverage(const ck_box &box, const ck_coverage_options *options = nullptr) {
        ck_coverage *p = nullptr;
        check(ck_coverage_create(&p, &box, options), "ck_coverage_create");
        h_ = handle(p);
    }
    ck_coverage *get() const noexcept { return h_.get(); }
    explicit operator bool() const noexcept { return h_.get() != nullptr; }
    /** A read-only view (valid while this object holds the counter). */
    coverage_view view() const noexcept { return coverage_view(h_.get()); }

    /** ck_coverage_add_view: the face the centre ray hit, or CK_FACE_NONE (CK_MISS). */
    int32_t add_view(const ck_mat4 &camera_pose, const ck_intrinsics &k, double timestamp) {
        int32_t face = CK_FACE_NONE;
        if (check(ck_coverage_add_view(&face, detail::live(get(), "ck_coverage_add_view"), &camera_pose, &k, timestamp),
                  "ck_coverage_add_view") == CK_MISS)
            return CK_FACE_NONE;
        return face;
    }
    /** ck_coverage_set_box (counts kept). */
    void set_box(const ck_box &box) {
        check(ck_coverage_set_box(detail::live(get(), "ck_coverage_set_box"), &box), "ck_coverage_set_box");
    }
    /** ck_coverage_reset. */
    void reset() { check(ck_coverage_reset(detail::live(get(), "ck_coverage_reset")), "ck_coverage_reset"); }
    /** ck_coverage_next_event: true with the oldest event, false when the queue is empty. */
    bool next_event(ck_event &event) {
        return check(ck_coverage_next_event(&event, detail::live(get(), "ck_coverage_next_event")),
                     "ck_coverage_next_event") == CK_OK;
    }
    std::vector<ck_event> events() { return detail::drain([this](ck_event &e) { return next_event(e); }); }

    ck_coverage_summary summary() const { return view().summary(); }
    ck_face_coverage face(int32_t face) const { return view().face(face); }

private:
    using handle = detail::owner<ck_coverage, detail::free_with<ck_coverage, ck_coverage_free>>;
    handle h_;
};

/* ---- surface -------------------------------------------------------------------------------- */

/** A non-owning, read-only view of a surface map (one lent by session::surface(), or
 *  surface::view()): valid while its owner is; never frees it. */
class surface_view {
public:
    surface_view() noexcept = default;
    explicit surface_view(const ck_surface *p) noexcept : p_(p) {}
    const ck_surface *get() const noexcept { return p_; }
    explicit operator bool() const noexcept { return p_ != nullptr; }

    /** ck_surface_summarize. */
    ck_surface_figures figures() const {
        ck_surface_figures f;
        check(ck_surface_summarize(&f, detail::live(p_, "ck_surface_summarize")), "ck_surface_summarize");
        return f;
    }
    /** ck_surface_side_figures: one side (0..5, a ck_face). */
    ck_surface_side side(int32_t face) const {
        ck_surface_side s;
        check(ck_surface_side_figures(&s, detail::live(p_, "ck_surface_side_figures"), face), "ck_surface_side_figures");
        return s;
    }
    /** ck_surface_suggest: the side to capture next from `camera_pose`. */
    ck_surface_hint suggest(const ck_mat4 &camera_pose) const {
        ck_surface_hint h;
        check(ck_surface_suggest(&h, detail::live(p_, "ck_surface_suggest"), &camera_pose), "ck_surface_suggest");
        return h;
    }
    /** ck_surface_next_view: the next-best view from `camera_pose` for a camera with `intrinsics`
     *  (nullptr: the library's default camera). */
    ck_surface_view next_view(const ck_mat4 &camera_pose, const ck_intrinsics *intrinsics = nullptr) const {
        ck_surface_view v = CK_SURFACE_VIEW_INIT;
        check(ck_surface_next_view(&v, detail::live(p_, "ck_surface_next_view"), &camera_pose, intrinsics), "ck_surface_next_view");
        return v;
    }
    /** ck_surface_grid_info. */
    ck_surface_grid grid() const {
        ck_surface_grid g;
        check(ck_surface_grid_info(&g, detail::live(p_, "ck_surface_grid_info")), "ck_surface_grid_info");
        return g;
    }
    /** ck_surface_voxels: the voxel states (ck_surface_voxel), x fastest. */
    std::vector<uint8_t> voxels() const {
        std::size_t n = 0;
        const ck_status s = ck_surface_voxels(nullptr, 0, &n, detail::live(p_, "ck_surface_voxels"));
        if (s != CK_E_BUFFER_TOO_SMALL) check(s, "ck_surface_voxels");
        std::vector<uint8_t> v(n);
        check(ck_surface_voxels(v.data(), v.size(), &n, p_), "ck_surface_voxels");
        return v;
    }
    /** ck_surface_elements. */
    std::vector<ck_surface_element> elements() const {
        std::size_t n = 0;
        const ck_status s = ck_surface_elements(nullptr, 0, &n, detail::live(p_, "ck_surface_elements"));
        if (s != CK_E_BUFFER_TOO_SMALL) check(s, "ck_surface_elements");
        std::vector<ck_surface_element> v(n);
        check(ck_surface_elements(v.data(), v.size(), &n, p_), "ck_surface_elements");
        return v;
    }
    /** ck_surface_export_ply (colors: a ck_surface_ply; flags 0 or CK_OPEN_OVERWRITE). */
    void export_ply(const char *path, int32_t colors = CK_SURFACE_PLY_COVERAGE, uint32_t flags = 0) const {
        check(ck_surface_export_ply(detail::live(p_, "ck_surface_export_ply"), path, colors, flags), "ck_surface_export_ply");
    }

private:
    const ck_surface *p_ = nullptr;
};

/** An owned surface coverage map (ck_surface) bound to a box. */
class surface {
public:
    /** ck_surface_create for `box` (copied); options may be nullptr (defaults). */
    explicit surface(const ck_box &box, const ck_surface_options *options = nullptr) {
        ck_surface *p = nullptr;
        check(ck_surface_create(&p, &box, options), "ck_surface_create");
        h_ = handle(p);
    }
    ck_surface *get() const noexcept { return h_.get(); }
    explicit operator bool() const noexcept { return h_.get() != nullptr; }
    /** A read-only view (valid while this object holds the map). */
    surface_view view() const noexcept { return surface_view(h_.get()); }

    /** ck_surface_fuse (confidence may be nullptr). */
    void fuse(const ck_depth_map &depth, const ck_depth_map *confidence, const ck_intrinsics &k, const ck_mat4 &camera_pose,
              double timestamp) {
        check(ck_surface_fuse(detail::live(get(), "ck_surface_fuse"), &depth, confidence, &k, &camera_pose, timestamp),
              "ck_surface_fuse");
    }
    /** ck_surface_add_view: the elements the view saw (0 on CK_MISS); image may be nullptr. */
    uint32_t add_view(const ck_mat4 &camera_pose, const ck_intrinsics &k, const ck_image *image, double timestamp) {
        uint32_t seen = 0;
        check(ck_surface_add_view(&seen, detail::live(get(), "ck_surface_add_view"), &camera_pose, &k, image, timestamp),
              "ck_surface_add_view");
        return seen;
    }
    /** ck_surface_set_box (the surface stays where it is in the world). */
    void set_box(const ck_box &box) {
        check(ck_surface_set_box(detail::live(get(), "ck_surface_set_box"), &box), "ck_surface_set_box");
    }
    /** ck_surface_reset. */
    void reset() { check(ck_surface_reset(detail::live(get(), "ck_surface_reset")), "ck_surface_reset"); }
    /** ck_surface_next_event: true with the oldest event, false when the queue is empty. */
    bool next_event(ck_event &event) {
        return check(ck_surface_next_event(&event, detail::live(get(), "ck_surface_next_event")),
                     "ck_surface_next_event") == CK_OK;
    }
    std::vector<ck_event> events() { return detail::drain([this](ck_event &e) { return next_event(e); }); }

    ck_surface_figures figures() const { return view().figures(); }
    ck_surface_side side(int32_t face) const { return view().side(face); }
    ck_surface_hint suggest(const ck_mat4 &camera_pose) const { return view().suggest(camera_pose); }
    ck_surface_view next_view(const ck_mat4 &camera_pose, const ck_intrinsics *intrinsics = nullptr) const {
        return view().next_view(camera_pose, intrinsics);
    }
    void export_ply(const char *path, int32_t colors = CK_SURFACE_PLY_COVERAGE, uint32_t flags = 0) const {
        view().export_ply(path, colors, flags);
    }

private:
    using handle = detail::owner<ck_surface, detail::free_with<ck_surface, ck_surface_free>>;
    handle h_;
};

/* ---- dataset ------------------------------------------------------------------------------- */

/** A non-owning reference to a dataset (one lent by session::dataset(), or dataset itself): every
 *  dataset call except close and cancel; never frees it. Valid while its owner is. */
class dataset_ref {
public:
    dataset_ref() noexcept = default;
    explicit dataset_ref(ck_dataset *p) noexcept : p_(p) {}
    ck_dataset *get() const noexcept { return p_; }
    explicit operator bool() const noexcept { return p_ != nullptr; }

    /** ck_dataset_add_frame: the new frame's id. */
    uint64_t add_frame(const ck_frame_desc &desc) {
        uint64_t id = 0;
        check(ck_dataset_add_frame(&id, live("ck_dataset_add_frame"), &desc), "ck_dataset_add_frame");
        return id;
    }
    /** ck_dataset_flush: every frame added so far is durable. */
    void flush() { check(ck_dataset_flush(live("ck_dataset_flush")), "ck_dataset_flush"); }
    /** ck_dataset_frame_count. */
    uint64_t frame_count() const {
        uint64_t n = 0;
        check(ck_dataset_frame_count(&n, live("ck_dataset_frame_count")), "ck_dataset_frame_count");
        return n;
    }
    /** ck_dataset_remove_frame. */
    void remove_frame(uint64_t id) {
        check(ck_dataset_remove_frame(live("ck_dataset_remove_frame"), id), "ck_dataset_remove_frame");
    }
    /** ck_dataset_set_box. */
    void set_box(const ck_box &box) { check(ck_dataset_set_box(live("ck_dataset_set_box"), &box), "ck_dataset_set_box"); }
    /** ck_dataset_set_surface: the surface's image-coloured points become the next finalize's
     *  sparse_pc.ply (an empty view: no point cloud). */
    void set_surface(surface_view surface) {
        check(ck_dataset_set_surface(live("ck_dataset_set_surface"), surface.get()), "ck_dataset_set_surface");
    }
    /** ck_dataset_begin_pass: the new pass number. */
    uint32_t begin_pass(const ck_box &box) {
        uint32_t pass = 0;
        check(ck_dataset_begin_pass(&pass, live("ck_dataset_begin_pass"), &box), "ck_dataset_begin_pass");
        return pass;
    }
    /** ck_dataset_next_image_path: the relative path of the next frame's image ("images/000003.png"). */
    std::string next_image_path(const char *extension = ".png") const {
        char buf[256];
        check(ck_dataset_next_image_path(buf, sizeof buf, nullptr, live("ck_dataset_next_image_path"), extension),
              "ck_dataset_next_image_path");
        return buf;
    }
    /** ck_dataset_log_event. */
    void log_event(const ck_event &event) {
        check(ck_dataset_log_event(live("ck_dataset_log_event"), &event), "ck_dataset_log_event");
    }
    /** ck_dataset_finalize (flags: CK_FINALIZE_ZIP; zip_path nullptr = "<dir>.zip"). */
    void finalize(uint32_t flags = 0, const char *zip_path = nullptr) {
        check(ck_dataset_finalize(live("ck_dataset_finalize"), flags, zip_path), "ck_dataset_finalize");
    }

protected:
    ck_dataset *live(const char *call) const { return detail::live(p_, call); }
    ck_dataset *p_ = nullptr;
};

/** An owned dataset folder (ck_dataset). The destructor closes it (ck_dataset_close, status
 *  dropped); call close() to see the final flush's status, or cancel() to delete what it wrote.
 *  Usable wherever a dataset_ref is (slicing a dataset into a dataset_ref gives a borrowed view). */
class dataset : public dataset_ref {
public:
    /** ck_dataset_create: a new dataset in `dir`; options may be nullptr (defaults). */
    static dataset create(const std::string &dir, const ck_dataset_options *options = nullptr) {
        ck_dataset *p = nullptr;
        check(ck_dataset_create(&p, dir.c_str(), options), "ck_dataset_create");
        return dataset(p);
    }
    /** ck_dataset_open: resumes the dataset in `dir`. */
    static dataset open(const std::string &dir) {
        ck_dataset *p = nullptr;
        check(ck_dataset_open(&p, dir.c_str()), "ck_dataset_open");
        return dataset(p);
    }

    dataset(const dataset &) = delete;
    dataset &operator=(const dataset &) = delete;
    dataset(dataset &&o) noexcept : dataset_ref(std::exchange(o.p_, nullptr)) {}
    dataset &operator=(dataset &&o) noexcept {
        if (this != &o) {
            (void)ck_dataset_close(p_);
            p_ = std::exchange(o.p_, nullptr);
        }
        return *this;
    }
    ~dataset() { (void)ck_dataset_close(p_); }

    /** ck_dataset_close: flushes and frees; the object is empty afterwards, even when it throws. */
    void close() { check(ck_dataset_close(std::exchange(p_, nullptr)), "ck_dataset_close"); }
    /** ck_dataset_cancel: deletes what the dataset wrote and frees it; the object is empty afterwards. */
    void cancel() { check(ck_dataset_cancel(std::exchange(p_, nullptr)), "ck_dataset_cancel"); }

private:
    explicit dataset(ck_dataset *p) noexcept : dataset_ref(p) {}
};

/* ---- session -------------------------------------------------------------------------------- */

/** A capture session (ck_session): one process() call per camera frame writes a dataset. The
 *  destructor closes it (ck_session_close, status dropped); call finish() then close() to see both. */
class session {
public:
    /** ck_session_create in `dir`; box may be nullptr (none yet). Like the Python binding, this
     *  layer is a host that reads the clock: when the caller gives no dataset options (options
     *  nullptr, or options->dataset nullptr), the dataset's start_time_unix is the current time
     *  (the scan's MultiScan id; the C library never reads a clock). Dataset options the caller
     *  does give are used as given: streaming needs their start_time_unix (nonzero). */
    session(const std::string &dir, const ck_session_options *options = nullptr, const ck_box *box = nullptr) {
        ck_session_options o;
        ck_dataset_options d;
        if (options == nullptr) {
            check(ck_session_options_init(&o, CK_PRESET_OBJECT_CAPTURE), "ck_session_options_init");
            options = &o;
        }
        if (options->dataset == nullptr) {
            check(ck_dataset_options_init(&d), "ck_dataset_options_init");
            d.start_time_unix = detail::unix_now();
            o = *options;
            o.dataset = &d;
            options = &o;
        }
        ck_session *p = nullptr;
        check(ck_session_create(&p, dir.c_str(), options, box), "ck_session_create");
        h_ = handle(p);
    }
    session(const std::string &dir, const ck_session_options &options, const ck_box &box)
        : session(dir, &options, &box) {}

    ck_session *get() const noexcept { return h_.get(); }
    explicit operator bool() const noexcept { return h_.get() != nullptr; }

    /** ck_session_process: what the session did with the frame. */
    ck_session_result process(const ck_session_frame &frame) {
        ck_session_result r;
        check(ck_session_process(&r, live("ck_session_process"), &frame), "ck_session_process");
        return r;
    }
    /** ck_session_next_event: true with the oldest event, false when the queue is empty. */
    bool next_event(ck_event &event) {
        return check(ck_session_next_event(&event, live("ck_session_next_event")), "ck_session_next_event") == CK_OK;
    }
    std::vector<ck_event> events() { return detail::drain([this](ck_event &e) { return next_event(e); }); }
    /** ck_session_set_box. */
    void set_box(const ck_box &box) { check(ck_session_set_box(live("ck_session_set_box"), &box), "ck_session_set_box"); }
    /** ck_session_begin_pass: the new pass number. */
    uint32_t begin_pass(const ck_box &box) {
        uint32_t pass = 0;
        check(ck_session_begin_pass(&pass, live("ck_session_begin_pass"), &box), "ck_session_begin_pass");
        return pass;
    }
    /** ck_session_flush: every processed frame is durable. */
    void flush() { check(ck_session_flush(live("ck_session_flush")), "ck_session_flush"); }
    /** ck_session_finish: finalises the dataset (flags as dataset_ref::finalize). */
    void finish(uint32_t flags = 0, const char *zip_path = nullptr) {
        check(ck_session_finish(live("ck_session_finish"), flags, zip_path), "ck_session_finish");
    }
    /** ck_session_coverage: a borrowed view, valid while this session is open (CK_E_STATE: no box yet). */
    coverage_view coverage() const {
        const ck_coverage *c = nullptr;
        check(ck_session_coverage(&c, detail::live(h_.get(), "ck_session_coverage")), "ck_session_coverage");
        return coverage_view(c);
    }
    /** ck_session_surface: a borrowed view of the session's surface map, valid while this session is
     *  open (CK_E_STATE: no box yet). */
    surface_view surface() const {
        const ck_surface *m = nullptr;
        check(ck_session_surface(&m, detail::live(h_.get(), "ck_session_surface")), "ck_session_surface");
        return surface_view(m);
    }
    /** ck_session_dataset: a borrowed reference, valid while this session is open. */
    dataset_ref dataset() {
        ck_dataset *d = nullptr;
        check(ck_session_dataset(&d, live("ck_session_dataset")), "ck_session_dataset");
        return dataset_ref(d);
    }
    /** ck_session_close: flushes and frees; the object is empty afterwards, even when it throws. */
    void close() { check(ck_session_close(h_.release()), "ck_session_close"); }

private:
    ck_session *live(const char *call) const { return detail::live(h_.get(), call); }
    using handle = detail::owner<ck_session, detail::close_with<ck_session, ck_session_close>>;
    handle h_;
};

/* ---- synthetic scene ------------------------------------------------------------------------ */

/** The synthetic test scene (ck_scene): LiDAR-like depth, confidence and RGB renders. */
class scene {
public:
    /** ck_scene_create. */
    explicit scene(uint64_t seed) {
        ck_scene *p = nullptr;
        check(ck_scene_create(&p, seed), "ck_scene_create");
        h_ = handle(p);
    }
    ck_scene *get() const noexcept { return h_.get(); }
    explicit operator bool() const noexcept { return h_.get() != nullptr; }

    /** ck_scene_target: the capture target's box (on the floor y = 0). */
    ck_box target() const {
        ck_box b;
        check(ck_scene_target(&b, live("ck_scene_target")), "ck_scene_target");
        return b;
    }
    /** ck_scene_render_depth into k.width x k.height spans (either may be empty, not both). */
    void render_depth(span<float> depth, span<uint8_t> confidence, const ck_mat4 &pose, const ck_intrinsics &k,
                      uint64_t frame) const {
        const std::size_t capacity = depth.data() ? depth.size() : confidence.size();
        if (depth.data() && confidence.data() && depth.size() != confidence.size())
            throw error(CK_E_INVALID_ARGUMENT, "capturekit::scene::render_depth", "depth and confidence sizes differ");
        check(ck_scene_render_depth(depth.data(), confidence.data(), capacity, nullptr, live("ck_scene_render_depth"),
                                    &pose, &k, frame),
              "ck_scene_render_depth");
    }
    /** ck_scene_render_rgb into a k.width x k.height x 3 span. */
    void render_rgb(span<uint8_t> rgb, const ck_mat4 &pose, const ck_intrinsics &k) const {
        check(ck_scene_render_rgb(rgb.data(), rgb.size(), nullptr, live("ck_scene_render_rgb"), &pose, &k),
              "ck_scene_render_rgb");
    }

private:
    const ck_scene *live(const char *call) const { return detail::live(h_.get(), call); }
    using handle = detail::owner<ck_scene, detail::free_with<ck_scene, ck_scene_free>>;
    handle h_;
};

/* ---- depth codec and .ckdepth files ----------------------------------------------------------- */

/** A reusable depth encoder/decoder (ck_depth_codec). */
class depth_codec {
public:
    /** ck_depth_codec_create; level 0 = the default. */
    explicit depth_codec(int32_t level = 0) {
        ck_depth_codec *p = nullptr;
        check(ck_depth_codec_create(&p, level), "ck_depth_codec_create");
        h_ = handle(p);
    }
    ck_depth_codec *get() const noexcept { return h_.get(); }
    explicit operator bool() const noexcept { return h_.get() != nullptr; }

    /** ck_depth_encode: one frame, sized with ck_depth_encode_bound. */
    std::vector<uint8_t> encode(const ck_depth_map &src) {
        std::vector<uint8_t> out(ck_depth_encode_bound(src.width, src.height, src.format));
        std::size_t n = 0;
        check(ck_depth_encode(out.data(), out.size(), &n, live("ck_depth_encode"), &src), "ck_depth_encode");
        out.resize(n);
        return out;
    }
    /** ck_depth_decode into `dst` (bytes) as dst_format; returns the bytes written. */
    std::size_t decode(span<uint8_t> dst, span<const uint8_t> src, int32_t dst_format) {
        std::size_t n = 0;
        check(ck_depth_decode(dst.data(), dst.size(), &n, live("ck_depth_decode"), src.data(), src.size(), dst_format),
              "ck_depth_decode");
        return n;
    }

private:
    ck_depth_codec *live(const char *call) const { return detail::live(h_.get(), call); }
    using handle = detail::owner<ck_depth_codec, detail::free_with<ck_depth_codec, ck_depth_codec_free>>;
    handle h_;
};

/** A .ckdepth file being written (ck_depth_writer). The destructor closes it (status dropped). */
class depth_writer {
public:
    /** ck_depth_writer_open (kind CK_DEPTH_KIND_*, flags CK_OPEN_*). */
    depth_writer(const std::string &path, uint32_t width, uint32_t height, int32_t kind, int32_t level = 0,
                 uint32_t flags = 0) {
        ck_depth_writer *p = nullptr;
        check(ck_depth_writer_open(&p, path.c_str(), width, height, kind, level, flags), "ck_depth_writer_open");
        h_ = handle(p);
    }
    ck_depth_writer *get() const noexcept { return h_.get(); }
    explicit operator bool() const noexcept { return h_.get() != nullptr; }

    /** ck_depth_writer_append. */
    void append(const ck_depth_map &src, double timestamp) {
        check(ck_depth_writer_append(live("ck_depth_writer_append"), &src, timestamp), "ck_depth_writer_append");
    }
    /** ck_depth_writer_flush (fsync). */
    void flush() { check(ck_depth_writer_flush(live("ck_depth_writer_flush")), "ck_depth_writer_flush"); }
    /** ck_depth_writer_frame_count. */
    uint64_t frame_count() const {
        uint64_t n = 0;
        check(ck_depth_writer_frame_count(&n, live("ck_depth_writer_frame_count")), "ck_depth_writer_frame_count");
        return n;
    }
    /** ck_depth_writer_close; the object is empty afterwards, even when it throws. */
    void close() { check(ck_depth_writer_close(h_.release()), "ck_depth_writer_close"); }

private:
    ck_depth_writer *live(const char *call) const { return detail::live(h_.get(), call); }
    using handle = detail::owner<ck_depth_writer, detail::close_with<ck_depth_writer, ck_depth_writer_close>>;
    handle h_;
};

/** A .ckdepth file being read (ck_depth_reader), random access. */
class depth_reader {
public:
    /** ck_depth_reader_open. */
    explicit depth_reader(const std::string &path) {
        ck_depth_reader *p = nullptr;
        check(ck_depth_reader_open(&p, path.c_str()), "ck_depth_reader_open");
        h_ = handle(p);
    }
    ck_depth_reader *get() const noexcept { return h_.get(); }
    explicit operator bool() const noexcept { return h_.get() != nullptr; }

    /** ck_depth_reader_info. */
    ck_depth_info info() const {
        ck_depth_info i;
        check(ck_depth_reader_info(&i, live("ck_depth_reader_info")), "ck_depth_reader_info");
        return i;
    }
    /** ck_depth_reader_read of frame `index` into `dst` (bytes) as dst_format: false past the last
     *  frame (CK_END); *timestamp_out (may be nullptr) gets its time. */
    bool read(span<uint8_t> dst, uint64_t index, int32_t dst_format, double *timestamp_out = nullptr) {
        return check(ck_depth_reader_read(dst.data(), dst.size(), nullptr, timestamp_out, live("ck_depth_reader_read"),
                                          index, dst_format),
                     "ck_depth_reader_read") == CK_OK;
    }
    /** ck_depth_reader_close; the object is empty afterwards. */
    void close() { check(ck_depth_reader_close(h_.release()), "ck_depth_reader_close"); }

private:
    ck_depth_reader *live(const char *call) const { return detail::live(h_.get(), call); }
    using handle = detail::owner<ck_depth_reader, detail::close_with<ck_depth_reader, ck_depth_reader_close>>;
    handle h_;
};

/* ---- scan reader (MultiScan scans, Stray Scanner captures) ---------------------------------- */

class scan {
public:
    /** ck_scan_open: a MultiScan scan folder or its <id>.json, or a Stray Scanner folder. */
    explicit scan(const std::string &path) {
        ck_scan *p = nullptr;
        check(ck_scan_open(&p, path.c_str()), "ck_scan_open");
        h_ = handle(p);
        check(ck_scan_describe(&info_, p), "ck_scan_describe");
    }
    ck_scan *get() const noexcept { return h_.get(); }
    explicit operator bool() const noexcept { return h_.get() != nullptr; }

    /** ck_scan_describe (read once at open). */
    const ck_scan_info &info() const noexcept { return info_; }
    uint64_t size() const noexcept { return info_.frame_count; }
    /** ck_scan_frame. */
    ck_scan_frame_info frame(uint64_t index) const {
        ck_scan_frame_info f;
        check(ck_scan_frame(&f, live("ck_scan_frame"), index), "ck_scan_frame");
        return f;
    }
    /** ck_scan_depth of frame `index` as float32 metres (depth_width x depth_height, row-major). */
    std::vector<float> depth(uint64_t index) {
        std::vector<float> d(static_cast<size_t>(info_.depth_width) * info_.depth_height);
        check(ck_scan_depth(d.data(), d.size() * sizeof(float), nullptr, live("ck_scan_depth"), index, CK_FORMAT_DEPTH_F32),
              "ck_scan_depth");
        return d;
    }
    /** ck_scan_confidence of frame `index` (0 low, 1 medium, 2 high). */
    std::vector<uint8_t> confidence(uint64_t index) {
        std::vector<uint8_t> c(static_cast<size_t>(info_.depth_width) * info_.depth_height);
        check(ck_scan_confidence(c.data(), c.size(), nullptr, live("ck_scan_confidence"), index), "ck_scan_confidence");
        return c;
    }
    /** ck_scan_close; the object is empty afterwards. */
    void close() { check(ck_scan_close(h_.release()), "ck_scan_close"); }

private:
    ck_scan *live(const char *call) const { return detail::live(h_.get(), call); }
    using handle = detail::owner<ck_scan, detail::close_with<ck_scan, ck_scan_close>>;
    handle h_;
    ck_scan_info info_{};
};

}  // namespace capturekit

#endif /* CAPTUREKIT_HPP */
