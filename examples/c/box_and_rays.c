/*
 * box_and_rays.c — CaptureKit's main C example (`make demo`).
 *
 * A phone-like camera looks at a box standing on the floor. The program places and edits the box
 * as a capture app's UI would, casts rays from pixels, draws which face of the box each part of
 * a 256x192 image sees, and fits a box to synthetic depth points. Every status is checked.
 */
#include "capturekit.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#define DEG (3.14159265358979323846 / 180.0)

/* Exits with the library's message on an error; returns CK_OK or CK_MISS otherwise. */
static ck_status check(ck_status status, const char *what)
{
    if (status < 0) {
        fprintf(stderr, "%s: %s\n  %s\n", what, ck_status_string(status), ck_last_error_message());
        exit(1);
    }
    return status;
}

static void print_box(const char *title, const ck_box *b)
{
    printf("%-28s centre (%6.3f, %6.3f, %6.3f)  size %.3f x %.3f x %.3f  yaw %6.1f deg\n", title, b->center.x,
           b->center.y, b->center.z, b->size.x, b->size.y, b->size.z, b->yaw / DEG);
}

static const char *const face_names[6] = { "front", "left", "right", "bottom", "top", "back" };

int main(void)
{
    static const char *const corner_names[8] = { "top-left-front", "top-right-front", "bot-right-front", "bot-left-front",
                                                 "top-left-back", "top-right-back", "bot-right-back", "bot-left-back" };
    /* 1. The library must match the header we were compiled with (same major version). */
    if (!CK_VERSION_COMPATIBLE(ck_version_number())) {
        fprintf(stderr, "libcapturekit %s does not match the header %s\n", ck_version_string(), CK_VERSION_STRING);
        return 1;
    }
    printf("CaptureKit %s (header %s)\n\n", ck_version_string(), CK_VERSION_STRING);

    /* 2. A box 1.4 m in front of the camera, on a floor 1.2 m below it, turned to show its front
     *    (local -z) to the camera, which looks down -z. */
    ck_box box;
    ck_vec3 center = { 0.0f, -1.0f, -1.4f }, size = { 0.6f, 0.4f, 0.5f };
    check(ck_box_init(&box, center, size, (float)(200 * DEG)), "ck_box_init");
    check(ck_box_set_floor(&box, -1.2f), "ck_box_set_floor");
    print_box("box on the floor:", &box);
    ck_vec3 corners[8];
    check(ck_box_corners(corners, &box), "ck_box_corners");
    for (int i = 0; i < 8; i++)
        printf("  corner %d %-16s (%6.3f, %6.3f, %6.3f)\n", i, corner_names[i], corners[i].x, corners[i].y, corners[i].z);

    /* 3. The camera: at the origin, pitched 30 degrees down; a 1920x1440 image. */
    ck_mat4 camera;
    ck_quat pitch_down = { (float)sin(-15 * DEG), 0.0f, 0.0f, (float)cos(-15 * DEG) };
    ck_vec3 origin = { 0.0f, 0.0f, 0.0f };
    check(ck_pose_from_quat(&camera, pitch_down, origin), "ck_pose_from_quat");
    ck_intrinsics k = { 1450.0f, 1450.0f, 960.0f, 720.0f, 1920, 1440 };

    /* 4. Edits as a UI makes them: drag relative to the camera, twist, pull the top face up. */
    check(ck_box_translate_camera(&box, &camera, 0.10f, 0.0f, 0.20f), "ck_box_translate_camera");
    print_box("moved 10 cm right, 20 fwd:", &box);
    check(ck_box_rotate_degrees(&box, 15.0f), "ck_box_rotate_degrees");
    print_box("rotated by 15 deg:", &box);
    check(ck_box_extend_face(&box, CK_FACE_TOP, 0.10f), "ck_box_extend_face");
    print_box("top face pulled up 10 cm:", &box);

    /* 5. Tap to place: the box stands where the ray through the tapped pixel meets the floor. */
    ck_hit hit;
    if (check(ck_box_place_at_pixel(&hit, &box, &camera, &k, 1010.0f, 770.0f), "ck_box_place_at_pixel") == CK_MISS)
        printf("the tap at (1010, 770) does not reach the floor\n");
    else
        printf("tap at (1010, 770) hit the floor at (%.3f, %.3f, %.3f), %.2f m away\n", hit.point.x, hit.point.y,
               hit.point.z, hit.distance);
    print_box("placed:", &box);

    /* 6. The centre ray: which face does the middle of the image see, and how far away? */
    ck_ray ray;
    check(ck_ray_from_pixel(&ray, &camera, &k, 960.0f, 720.0f), "ck_ray_from_pixel");
    if (check(ck_ray_box(&hit, &ray, &box), "ck_ray_box") == CK_MISS)
        printf("\ncentre ray: misses the box\n");
    else
        printf("\ncentre ray: %s face at %.3f m, point (%.3f, %.3f, %.3f)\n", face_names[hit.face], hit.distance,
               hit.point.x, hit.point.y, hit.point.z);

    /* 7. Every pixel of a 256x192 grid (the LiDAR depth resolution); ask for the size first. */
    ck_intrinsics depth_k;
    check(ck_intrinsics_scale(&depth_k, &k, 256, 192), "ck_intrinsics_scale");
    size_t count = 0;
    if (ck_ray_box_grid(NULL, NULL, 0, &count, &camera, &depth_k, &box) != CK_E_BUFFER_TOO_SMALL) {
        fprintf(stderr, "ck_ray_box_grid size query: %s\n", ck_last_error_message());
        return 1;
    }
    int32_t *faces = malloc(count * sizeof *faces);
    float *distances = malloc(count * sizeof *distances);
    if (!faces || !distances) { fprintf(stderr, "out of memory\n"); return 1; }
    check(ck_ray_box_grid(faces, distances, count, &count, &camera, &depth_k, &box), "ck_ray_box_grid");

    /* An ASCII map, one character per 8x8 block (the block's centre pixel): F L R B T K = front,
     * left, right, bottom, top, back; '.' = miss. */
    printf("\nfaces seen by the 256x192 grid (one character per 8x8 pixels):\n");
    for (uint32_t row = 4; row < depth_k.height; row += 8) {
        putchar(' ');
        for (uint32_t col = 4; col < depth_k.width; col += 8) {
            int32_t f = faces[row * depth_k.width + col];
            putchar(f == CK_FACE_NONE ? '.' : "FLRBTK"[f]);
        }
        putchar('\n');
    }
    size_t per_face[7] = { 0 };
    for (size_t i = 0; i < count; i++) per_face[faces[i] + 1]++;
    printf("pixels per face:");
    for (int f = 0; f < 6; f++) printf(" %s %zu,", face_names[f], per_face[f + 1]);
    printf(" miss %zu (of %zu)\n", per_face[0], count);
    free(faces);
    free(distances);

    /* 8. Fit a box to depth points: a 35 x 25 x 30 cm object on the floor, plus floor points. */
    enum { N_OBJECT = 600, N_FLOOR = 200 };
    static ck_vec3 points[N_OBJECT + N_FLOOR];
    srand(7);
    for (int i = 0; i < N_OBJECT + N_FLOOR; i++) {
        double a = rand() / (double)RAND_MAX - 0.5, b = rand() / (double)RAND_MAX - 0.5, c = rand() / (double)RAND_MAX;
        double yaw = -10 * DEG, lx = 0.35 * a, lz = 0.30 * b; /* local x, z */
        double y = i < N_OBJECT ? -1.2 + 0.25 * c : -1.2 + 0.004 * c;
        if (i >= N_OBJECT) { lx *= 6; lz *= 6; } /* floor points spread wider */
        points[i].x = (float)(0.4 + cos(yaw) * lx + sin(yaw) * lz);
        points[i].y = (float)y;
        points[i].z = (float)(-1.8 - sin(yaw) * lx + cos(yaw) * lz);
    }
    ck_fit_options options = CK_FIT_OPTIONS_INIT;
    options.use_floor = 1;
    options.floor = -1.2f;
    options.padding = 0.01f;
    ck_box fitted;
    check(ck_box_fit_points(&fitted, points, N_OBJECT + N_FLOOR, &options), "ck_box_fit_points");
    print_box("\nfitted to depth points:", &fitted);
    return 0;
}
