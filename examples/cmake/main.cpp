// The CMake example: a box on the floor, a ray from the image centre, the faces of a coarse grid
// and a few scheduler frames, through the header-only C++ layer (capturekit.hpp).
#include <capturekit.hpp>

#include <cstdio>

namespace ck = capturekit;

int main() {
    try {
        ck::check_version();  // the loaded library serves this header
        std::printf("CaptureKit %s via CMake (CaptureKit::capturekit)\n", ck::version_string());

        ck_box box = ck::make_box({0.0f, 0.0f, -2.0f}, {0.6f, 0.4f, 0.5f});
        ck::set_floor(box, -0.5f);          // stands on the floor from now on
        ck::rotate_degrees(box, 180.0f);    // its front (local -z) faces the camera
        const ck_mat4 pose = ck::identity();  // camera at the origin looking down -z
        const ck_intrinsics k = {500.0f, 500.0f, 320.0f, 240.0f, 640, 480};

        const auto hit = ck::ray_box(ck::ray_from_pixel(pose, k, 320.0f, 320.0f), box);
        if (!hit || hit->face != CK_FACE_FRONT) {
            std::fprintf(stderr, "expected the front face\n");
            return 1;
        }
        std::printf("ray below the centre: face %d at %.3f m\n", hit->face, hit->distance);

        const ck::grid g = ck::ray_box_grid(pose, ck::scale(k, 64, 48), box);
        for (std::size_t row = 0; row < 48; row += 4) {
            for (std::size_t col = 0; col < 64; col++) {
                const int32_t f = g.faces[row * 64 + col];
                std::putchar(f == CK_FACE_NONE ? '.' : "FLRBTK"[f]);
            }
            std::putchar('\n');
        }

        ck::scheduler scheduler;  // object-capture defaults; freed at the end of the scope
        ck_scheduler_frame frame = ck::scheduler_frame();
        frame.box = &box;
        for (int i = 0; i < 5; i++) {
            frame.timestamp = i / 30.0;
            const ck_guidance guidance = scheduler.update(frame);
            std::printf("frame %d: capture %d, flags 0x%x\n", i, guidance.capture, guidance.flags);
        }
        ck::make_box({0, 0, 0}, {0, 1, 1});  // throws: a zero edge
        std::fprintf(stderr, "expected an exception\n");
        return 1;
    } catch (const ck::error &e) {
        if (e.status() != CK_E_INVALID_ARGUMENT) {
            std::fprintf(stderr, "%s\n", e.what());
            return 1;
        }
        std::printf("as expected: %s\n", e.what());
    }
    return 0;
}
