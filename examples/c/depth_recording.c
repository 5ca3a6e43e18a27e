/*
 * depth_recording.c — record synthetic LiDAR-like depth to a .ckdepth file and read it back.
 *
 * Each frame is a tilted plane in front of the camera (1.2 m to about 3.5 m) with sensor noise,
 * a box standing on it, and holes (invalid pixels = 0) where the sensor gets no return. Frames
 * go in as float32 metres and are stored losslessly as float16 metres; reading them back in a
 * random order shows the file is seekable.
 *
 * Usage: depth_recording [path]    (default: depth_recording.ckdepth in the current directory)
 */
#include "capturekit.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define W 256
#define H 192
#define FRAMES 90 /* 3 s at 30 fps */

/* A hash of (frame, pixel, salt) as noise in [-0.5, 0.5): any frame can be regenerated alone. */
static double noise(unsigned frame, unsigned pixel, unsigned salt)
{
    unsigned long long h = (frame * 0x9E3779B97F4A7C15ull) ^ (pixel * 0xC2B2AE3D27D4EB4Full) ^ salt;
    h ^= h >> 31; h *= 0xBF58476D1CE4E5B9ull; h ^= h >> 29; h *= 0x94D049BB133111EBull; h ^= h >> 32;
    return (double)(h >> 11) / 9007199254740992.0 - 0.5;
}

static void make_frame(float *depth, int index)
{
    double sway = 0.2 * sin(index * 0.1); /* the camera sways slowly */
    int x, y;
    for (y = 0; y < H; y++) {
        for (x = 0; x < W; x++) {
            unsigned p = (unsigned)(y * W + x);
            double d = 1.2 + 0.009 * y + 0.002 * (x - W / 2) * sway;           /* the tilted floor */
            if (x > 90 + index && x < 150 + index && y > 60 && y < 130) d -= 0.45; /* a box on it */
            d += 0.004 * d * noise((unsigned)index, p, 1);                      /* noise grows with range */
            if (noise((unsigned)index, p, 2) > 0.46 || (x < 12 && y > 150)) d = 0.0; /* holes: no return */
            depth[p] = (float)d;
        }
    }
}

static int fail(const char *what, ck_status st)
{
    fprintf(stderr, "%s failed: %s (%s)\n", what, ck_status_string(st), ck_last_error_message());
    return 1;
}

int main(int argc, char **argv)
{
    const char *path = argc > 1 ? argv[1] : "depth_recording.ckdepth";
    static float depth[W * H], back[W * H];
    const ck_depth_map map = { depth, W, H, 0, CK_FORMAT_DEPTH_F32, 0u };  /* the frame as a depth map */
    static uint16_t half[W * H];
    ck_depth_writer *writer = NULL;
    ck_depth_reader *reader = NULL;
    ck_depth_info info;
    ck_status st;
    long file_bytes;
    double t;
    int i, order[FRAMES];
    FILE *f;

    if (!CK_VERSION_COMPATIBLE(ck_version_number())) {
        fprintf(stderr, "libcapturekit %s does not match this header (%s)\n", ck_version_string(), CK_VERSION_STRING);
        return 1;
    }

    /* Write: one append per frame, each straight to the file (a crash keeps every complete frame). */
    st = ck_depth_writer_open(&writer, path, W, H, CK_DEPTH_KIND_FLOAT16, 0, CK_OPEN_OVERWRITE);
    if (st != CK_OK) return fail("ck_depth_writer_open", st);
    for (i = 0; i < FRAMES; i++) {
        make_frame(depth, i);
        st = ck_depth_writer_append(writer, &map, i / 30.0);
        if (st != CK_OK) { ck_depth_writer_close(writer); return fail("ck_depth_writer_append", st); }
    }
    st = ck_depth_writer_close(writer); /* flushes (fsync) and frees */
    if (st != CK_OK) return fail("ck_depth_writer_close", st);

    /* Read back in a shuffled order; each frame must equal float32 -> float16 -> float32 of what
     * was written (exactly what ck_depth_convert does). */
    st = ck_depth_reader_open(&reader, path);
    if (st != CK_OK) return fail("ck_depth_reader_open", st);
    st = ck_depth_reader_info(&info, reader);
    if (st != CK_OK) { ck_depth_reader_close(reader); return fail("ck_depth_reader_info", st); }
    for (i = 0; i < FRAMES; i++) order[i] = i;
    for (i = FRAMES - 1; i > 0; i--) {
        int j = (int)((noise(0, (unsigned)i, 3) + 0.5) * (i + 1)), k = order[i];
        order[i] = order[j];
        order[j] = k;
    }
    for (i = 0; i < FRAMES; i++) {
        int k = order[i];
        st = ck_depth_reader_read(back, sizeof back, NULL, &t, reader, (uint64_t)k, CK_FORMAT_DEPTH_F32);
        if (st != CK_OK) { ck_depth_reader_close(reader); return fail("ck_depth_reader_read", st); }
        make_frame(depth, k);
        ck_depth_convert(half, CK_FORMAT_DEPTH_F16, depth, CK_FORMAT_DEPTH_F32, W * H);
        ck_depth_convert(depth, CK_FORMAT_DEPTH_F32, half, CK_FORMAT_DEPTH_F16, W * H);
        if (memcmp(back, depth, sizeof back) != 0 || t != k / 30.0) {
            fprintf(stderr, "frame %d differs\n", k);
            ck_depth_reader_close(reader);
            return 1;
        }
    }
    ck_depth_reader_close(reader);

    f = fopen(path, "rb");
    if (!f || fseek(f, 0, SEEK_END) != 0 || (file_bytes = ftell(f)) <= 0) { perror(path); return 1; }
    fclose(f);
    printf("%s: %lu frames of %ux%u float16 depth, %ld bytes\n", path, (unsigned long)info.frame_count,
           info.width, info.height, file_bytes);
    printf("  %.0f file bytes per frame (float16 raw: %d), ratio %.2f; read back in random order, lossless\n",
           (double)file_bytes / FRAMES, W * H * 2, (double)W * H * 2 * FRAMES / (double)file_bytes);
    return 0;
}
