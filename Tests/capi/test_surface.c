/* Surface coverage (ck_surface.h): every call, every status its @return list promises, hostile
 * inputs, and a sphere rendered by our own ray cast (a camera orbiting it sees all of it). */
#define _POSIX_C_SOURCE 200809L
#include <capturekit.h>

#include "support.h"

STATIC_ASSERT(sizeof(ck_surface_options) == 44, surface_options_size);
STATIC_ASSERT(sizeof(ck_surface_side) == 24, surface_side_size);
STATIC_ASSERT(sizeof(ck_surface_figures) == 56, surface_figures_size);
STATIC_ASSERT(sizeof(ck_surface_grid) == 32, surface_grid_size);
STATIC_ASSERT(sizeof(ck_surface_element) == 48, surface_element_size);
STATIC_ASSERT(sizeof(void *) != 8 || sizeof(ck_surface_hint) == 40, surface_hint_size);
STATIC_ASSERT(sizeof(void *) != 8 || sizeof(ck_surface_view) == 128, surface_view_size);

#define W 128
#define H 96
static const float CENTRE[3] = { 0.0f, 0.5f, 0.0f };
static const float RADIUS = 0.15f;

/* z-depth of a sphere through each pixel centre (0 = miss). */
static void render_sphere(float *depth, const ck_mat4 *pose, const ck_intrinsics *k)
{
    int x, y, i;
    for (y = 0; y < H; y++) {
        for (x = 0; x < W; x++) {
            float dc[3] = { (x + 0.5f - k->cx) / k->fx, -(y + 0.5f - k->cy) / k->fy, -1.0f }, d[3], o[3];
            float a = 0, b = 0, c = 0, disc, t;
            for (i = 0; i < 3; i++) {
                d[i] = pose->m[i] * dc[0] + pose->m[4 + i] * dc[1] + pose->m[8 + i] * dc[2];
                o[i] = pose->m[12 + i] - CENTRE[i];
                a += d[i] * d[i]; b += 2 * d[i] * o[i]; c += o[i] * o[i];
            }
            c -= RADIUS * RADIUS;
            disc = b * b - 4 * a * c;
            t = disc > 0 ? (-b - sqrtf(disc)) / (2 * a) : 0;
            depth[y * W + x] = t > 0 ? t : 0;
        }
    }
}

static int file_exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

static ck_mat4 orbit_pose(int i, int n, float elevation)
{
    float a = 6.2831853f * (float)i / (float)n;
    float eye[3] = { CENTRE[0] + 0.7f * sinf(a) * cosf(elevation), CENTRE[1] + 0.7f * sinf(elevation),
                     CENTRE[2] - 0.7f * cosf(a) * cosf(elevation) };
    return look_at(eye, CENTRE);
}

int main(void)
{
    ck_box box, bad_box;
    ck_surface_options o, big;
    ck_surface *s = NULL;
    ck_intrinsics k = { 100.0f, 100.0f, 64.0f, 48.0f, W, H }, k_small = { 50.0f, 50.0f, 32.0f, 24.0f, 64, 48 };
    static float depth[W * H];
    static uint8_t conf[W * H], rgb[W * H * 3];
    ck_depth_map dm, cm, bad;
    ck_image img;
    ck_mat4 pose, nan_pose;
    uint32_t seen = 0;
    ck_surface_figures f;
    ck_surface_side side;
    ck_surface_hint hint;
    ck_surface_grid g;
    ck_event ev;
    size_t written = 0;
    uint8_t *vox;
    ck_surface_element *el;
    int i, events_side = 0, events_done = 0;
    FILE *fp;
    char head[16];

    if (tmp_dir_create("ck-surface") != 0) return 1;
    { ck_vec3 c = { CENTRE[0], CENTRE[1], CENTRE[2] }, sz = { 0.5f, 0.5f, 0.5f }; REQUIRE(ck_box_init(&box, c, sz, 0.0f)); }
    bad_box = box; bad_box.size.x = NAN;

    /* Options. */
    ERR(CK_E_INVALID_ARGUMENT, "options_out", ck_surface_options_init, (NULL));
    CHECK_STATUS(ck_surface_options_init(&o), CK_OK);
    CHECK(o.struct_size == sizeof o && o.min_views == 3 && o.side_mask == 0x37u && o.face_cells == 16u);
    {
        ck_surface_options init = CK_SURFACE_OPTIONS_INIT;
        CHECK(memcmp(&init, &o, sizeof o) == 0);
    }

    /* Create. */
    ERR(CK_E_INVALID_ARGUMENT, "out", ck_surface_create, (NULL, &box, NULL));
    ERR(CK_E_INVALID_ARGUMENT, "box", ck_surface_create, (&s, NULL, NULL));
    CHECK(s == NULL);
    CHECK_STATUS(ck_surface_create(&s, &bad_box, NULL), CK_E_INVALID_ARGUMENT);
    o.voxel_size = 1e-9f;
    ERR(CK_E_INVALID_ARGUMENT, "voxel_size", ck_surface_create, (&s, &box, &o));
    o.voxel_size = 0; o.goal_fraction = NAN;
    ERR(CK_E_INVALID_ARGUMENT, "goal_fraction", ck_surface_create, (&s, &box, &o));
    o.goal_fraction = 0.9f; o.side_mask = 0x40;
    ERR(CK_E_INVALID_ARGUMENT, "side_mask", ck_surface_create, (&s, &box, &o));
    o.side_mask = 0x37;
    {   /* A newer caller's struct with a non-zero unknown field. */
        unsigned char newer[sizeof(ck_surface_options) + 8];
        memset(newer, 0, sizeof newer);
        memcpy(newer, &o, sizeof o);
        *(uint32_t *)(void *)newer = (uint32_t)sizeof newer;
        newer[sizeof o + 2] = 1;
        CHECK_STATUS(ck_surface_create(&s, &box, (const ck_surface_options *)(const void *)newer), CK_E_UNSUPPORTED);
    }
    {   /* Zero and huge sizes: a tiny voxel on a huge box is coarsened to the voxel budget. */
        ck_box huge;
        { ck_vec3 c = { 0, 0, 0 }, sz = { 1000, 1000, 1000 }; REQUIRE(ck_box_init(&huge, c, sz, 0)); }
        big = o; big.voxel_size = 0.0005f;
        CHECK_STATUS(ck_surface_create(&s, &huge, &big), CK_OK);
        CHECK_STATUS(ck_surface_grid_info(&g, s), CK_OK);
        CHECK((uint64_t)g.dims[0] * g.dims[1] * g.dims[2] <= 3000000u);
        CHECK_STATUS(ck_surface_summarize(&f, s), CK_OK);
        CHECK(f.memory_bytes < 32u * 1024u * 1024u);
        ck_surface_free(s);
    }
    {   /* The floor rule: with a floor the grid starts 2 voxels above it (in a flat box at most half
         * its height up) and ends at the box's top (rounded up to whole voxels). */
        ck_box on_floor, flat;
        { ck_vec3 c = { 0, 0, 0 }, sz = { 0.64f, 0.5f, 0.32f }; REQUIRE(ck_box_init(&on_floor, c, sz, 0)); }
        REQUIRE(ck_box_set_floor(&on_floor, -1.0f));                    /* centre y = -0.75 */
        CHECK_STATUS(ck_surface_create(&s, &on_floor, NULL), CK_OK);
        CHECK_STATUS(ck_surface_grid_info(&g, s), CK_OK);
        CHECK(fabsf(g.voxel_size - 0.005f) < 1e-7f && g.dims[0] == 128 && g.dims[2] == 64);
        CHECK(fabsf(g.origin[1] - (-0.25f + 0.01f)) < 1e-6f && (g.dims[1] == 98 || g.dims[1] == 99));
        CHECK(g.origin[1] + (float)g.dims[1] * g.voxel_size >= 0.25f - 1e-5f
              && g.origin[1] + (float)g.dims[1] * g.voxel_size <= 0.25f + g.voxel_size + 1e-5f);
        CHECK(fabsf(g.origin[0] + 0.32f) < 1e-6f && fabsf(g.origin[2] + 0.16f) < 1e-6f);
        ck_surface_free(s);
        { ck_vec3 c = { 0, 0, 0 }, sz = { 2.56f, 0.01f, 2.56f }; REQUIRE(ck_box_init(&flat, c, sz, 0)); }
        REQUIRE(ck_box_set_floor(&flat, 0.0f));
        CHECK_STATUS(ck_surface_create(&s, &flat, NULL), CK_OK);
        CHECK_STATUS(ck_surface_grid_info(&g, s), CK_OK);
        CHECK(fabsf(g.origin[1] - 0.0f) < 1e-6f && g.dims[1] == 1);      /* 0.005 m up, 1 voxel of 0.02 m */
        ck_surface_free(s);
    }
    CHECK_STATUS(ck_surface_create(&s, &box, NULL), CK_OK);
    ck_surface_free(NULL);

    /* Without depth: the box's faces stand in. A view from the front sees the front face's cells. */
    {
        float eye[3] = { CENTRE[0], CENTRE[1], CENTRE[2] - 1.5f };
        pose = look_at(eye, CENTRE);
    }
    CHECK_STATUS(ck_surface_add_view(&seen, s, &pose, &k, NULL, 1.0), CK_OK);
    CHECK(seen == 16u * 16u);
    CHECK_STATUS(ck_surface_side_figures(&side, s, CK_FACE_FRONT), CK_OK);
    CHECK(side.observed == 256 && side.well_covered == 0);
    CHECK_STATUS(ck_surface_side_figures(&side, s, CK_FACE_BACK), CK_OK);
    CHECK(side.observed == 0 && side.frontier == 256);
    CHECK_STATUS(ck_surface_summarize(&f, s), CK_OK);
    CHECK(f.from_depth == 0 && f.views == 1);
    {   /* Looking away: CK_MISS, the view still counted. */
        float eye[3] = { CENTRE[0], CENTRE[1], CENTRE[2] - 1.5f }, away[3] = { CENTRE[0], CENTRE[1], CENTRE[2] - 3.0f };
        ck_mat4 p2 = look_at(eye, away);
        CHECK_STATUS(ck_surface_add_view(&seen, s, &p2, &k, NULL, 2.0), CK_MISS);
        CHECK(seen == 0);
    }

    /* Hostile inputs: nothing changes. */
    nan_pose = pose; nan_pose.m[12] = NAN;
    memset(&dm, 0, sizeof dm);
    dm.data = depth; dm.width = W; dm.height = H; dm.format = CK_FORMAT_DEPTH_F32;
    ERR(CK_E_INVALID_ARGUMENT, "surface", ck_surface_fuse, (NULL, &dm, NULL, &k, &pose, 0.0));
    ERR(CK_E_INVALID_ARGUMENT, "depth", ck_surface_fuse, (s, NULL, NULL, &k, &pose, 0.0));
    ERR(CK_E_INVALID_ARGUMENT, "intrinsics", ck_surface_fuse, (s, &dm, NULL, NULL, &pose, 0.0));
    ERR(CK_E_INVALID_ARGUMENT, "camera_pose", ck_surface_fuse, (s, &dm, NULL, &k, NULL, 0.0));
    ERR(CK_E_INVALID_ARGUMENT, "camera_pose", ck_surface_fuse, (s, &dm, NULL, &k, &nan_pose, 0.0));
    ERR(CK_E_INVALID_ARGUMENT, "timestamp", ck_surface_fuse, (s, &dm, NULL, &k, &pose, NAN));
    ERR(CK_E_INVALID_ARGUMENT, "depth map", ck_surface_fuse, (s, &dm, NULL, &k_small, &pose, 0.0));
    bad = dm; bad.width = 0;
    ERR(CK_E_INVALID_ARGUMENT, "depth", ck_surface_fuse, (s, &bad, NULL, &k, &pose, 0.0));
    bad = dm; bad.format = CK_FORMAT_U8;
    ERR(CK_E_INVALID_ARGUMENT, "depth.format", ck_surface_fuse, (s, &bad, NULL, &k, &pose, 0.0));
    cm = dm; cm.data = conf; cm.format = CK_FORMAT_U8; cm.width = 64;
    ERR(CK_E_INVALID_ARGUMENT, "confidence", ck_surface_fuse, (s, &dm, &cm, &k, &pose, 0.0));
    cm.width = W;
    ERR(CK_E_INVALID_ARGUMENT, "surface", ck_surface_add_view, (&seen, NULL, &pose, &k, NULL, 0.0));
    ERR(CK_E_INVALID_ARGUMENT, "camera_pose", ck_surface_add_view, (&seen, s, NULL, &k, NULL, 0.0));
    ERR(CK_E_INVALID_ARGUMENT, "intrinsics", ck_surface_add_view, (&seen, s, &pose, NULL, NULL, 0.0));
    ERR(CK_E_INVALID_ARGUMENT, "timestamp", ck_surface_add_view, (&seen, s, &pose, &k, NULL, INFINITY));
    memset(&img, 0, sizeof img);
    img.data = rgb; img.width = 64; img.height = 48; img.format = CK_IMAGE_FORMAT_RGB8;
    ERR(CK_E_INVALID_ARGUMENT, "image", ck_surface_add_view, (&seen, s, &pose, &k, &img, 0.0));
    CHECK_STATUS(ck_surface_summarize(&f, s), CK_OK);
    CHECK(f.views == 2 && f.frames_fused == 0);

    /* NaN / inf / negative depth pixels are skipped, not an error. */
    for (i = 0; i < W * H; i++) depth[i] = (i % 3 == 0) ? NAN : (i % 3 == 1 ? INFINITY : -1.0f);
    CHECK_STATUS(ck_surface_fuse(s, &dm, NULL, &k, &pose, 0.0), CK_OK);
    CHECK_STATUS(ck_surface_summarize(&f, s), CK_OK);
    CHECK(f.from_depth == 1 && f.frames_fused == 1 && f.all.observed == 0);

    /* An orbit of the sphere at three heights, with confidence and colour: the surface completes
     * (goal 0.7: at 128 x 96 about 80 % of the estimated surface ends well covered). */
    ck_surface_free(s);
    o.goal_fraction = 0.7f;
    o.min_px_per_cm = 1.0f;  /* a 128 x 96 camera at 0.55 m gives 1.8 px/cm */
    REQUIRE(ck_surface_create(&s, &box, &o));
    memset(conf, 2, sizeof conf);
    memset(rgb, 128, sizeof rgb);
    img.width = W; img.height = H;
    for (i = 0; i < 36; i++) {
        float el = (i % 3 == 0) ? -0.35f : (i % 3 == 1 ? 0.25f : 0.9f);
        pose = orbit_pose(i / 3, 12, el);
        render_sphere(depth, &pose, &k);
        CHECK_STATUS(ck_surface_fuse(s, &dm, &cm, &k, &pose, (double)i), CK_OK);
        CHECK_STATUS(ck_surface_add_view(&seen, s, &pose, &k, &img, (double)i), CK_OK);
    }
    while (ck_surface_next_event(&ev, s) == CK_OK) {
        if (ev.code == CK_EVENT_SURFACE_SIDE_COMPLETED) events_side++;
        if (ev.code == CK_EVENT_SURFACE_COMPLETED) events_done++;
        CHECK(ev.text != NULL && strstr(ev.text, "ur") != NULL);
    }
    CHECK(events_side == 5);   /* every side of the mask, each once */
    CHECK(events_done == 1);
    CHECK_STATUS(ck_surface_next_event(&ev, s), CK_END);
    ERR(CK_E_INVALID_ARGUMENT, "event_out", ck_surface_next_event, (NULL, s));
    ERR(CK_E_INVALID_ARGUMENT, "surface", ck_surface_next_event, (&ev, NULL));
    CHECK(strcmp(ck_event_string(CK_EVENT_SURFACE_COMPLETED), "Surface complete") == 0);

    CHECK_STATUS(ck_surface_summarize(&f, s), CK_OK);
    CHECK(f.from_depth == 1 && f.frames_fused == 36 && f.views == 36 && f.all.completed == 1);
    CHECK(f.all.observed > 1000 && f.all.complete_fraction >= 0.7f);
    CHECK_NEAR(f.voxel_size, 0.5f / 128, 1e-7);
    CHECK(f.memory_bytes < 32u * 1024u * 1024u);
    ERR(CK_E_INVALID_ARGUMENT, "out", ck_surface_summarize, (NULL, s));
    ERR(CK_E_INVALID_ARGUMENT, "surface", ck_surface_summarize, (&f, NULL));
    ERR(CK_E_INVALID_ARGUMENT, "face", ck_surface_side_figures, (&side, s, 6));
    ERR(CK_E_INVALID_ARGUMENT, "out", ck_surface_side_figures, (NULL, s, 0));

    CHECK_STATUS(ck_surface_suggest(&hint, s, &pose), CK_OK);
    CHECK(hint.side == -1 && strcmp(hint.text, "Surface complete") == 0);
    ERR(CK_E_INVALID_ARGUMENT, "camera_pose", ck_surface_suggest, (&hint, s, &nan_pose));
    ERR(CK_E_INVALID_ARGUMENT, "out", ck_surface_suggest, (NULL, s, &pose));

    /* The next-best view: complete after the orbit, still naming the best view to refine. */
    {
        ck_surface_view v = CK_SURFACE_VIEW_INIT, v2;
        ck_surface *s1 = NULL;
        ck_mat4 front = orbit_pose(0, 12, 0.25f);
        ck_intrinsics bad_k = k;
        float fwd[3], to_centre[3], len = 0, cosv = 0;
        int j;
        CHECK_STATUS(ck_surface_next_view(&v, s, &pose, &k), CK_OK);
        CHECK(v.complete == 1 && strcmp(v.text, "Surface complete") == 0 && v.candidates == 48);
        /* One view of the front: the next view turns away from it, towards surface not yet seen,
         * and its pose looks at the box centre from the working distance. */
        REQUIRE(ck_surface_create(&s1, &box, &o));
        render_sphere(depth, &front, &k);
        CHECK_STATUS(ck_surface_fuse(s1, &dm, NULL, &k, &front, 0.0), CK_OK);
        CHECK_STATUS(ck_surface_add_view(&seen, s1, &front, &k, NULL, 0.0), CK_OK);
        v = (ck_surface_view)CK_SURFACE_VIEW_INIT;
        CHECK_STATUS(ck_surface_next_view(&v, s1, &front, NULL), CK_OK);
        CHECK(v.struct_size == sizeof v && v.complete == 0 && v.side >= 0 && v.gain > 0 && v.gain_fraction > 0);
        CHECK(fabsf(v.camera_azimuth) < 0.01f && fabsf(v.move_angle) > 0.7f && v.text != NULL && strncmp(v.text, "Move", 4) == 0);
        CHECK_NEAR(v.distance, 0.7f, 1e-3);
        for (j = 0; j < 3; j++) {
            fwd[j] = -v.target_pose.m[8 + j];
            to_centre[j] = CENTRE[j] - v.target_pose.m[12 + j];
            len += to_centre[j] * to_centre[j];
        }
        for (j = 0; j < 3; j++) cosv += fwd[j] * to_centre[j] / sqrtf(len);
        CHECK(cosv > 0.9999f);
        CHECK_NEAR(sqrtf(len), 0.7f, 1e-3);
        /* The hint agrees with it. */
        CHECK_STATUS(ck_surface_suggest(&hint, s1, &front), CK_OK);
        CHECK(hint.side == v.side && fabsf(hint.target_azimuth - v.target_azimuth) < 1e-6f);
        /* Hostile inputs: nothing written. */
        v2 = v;
        ERR(CK_E_INVALID_ARGUMENT, "out", ck_surface_next_view, (NULL, s1, &front, NULL));
        ERR(CK_E_INVALID_ARGUMENT, "surface", ck_surface_next_view, (&v, NULL, &front, NULL));
        ERR(CK_E_INVALID_ARGUMENT, "camera_pose", ck_surface_next_view, (&v, s1, NULL, NULL));
        ERR(CK_E_INVALID_ARGUMENT, "camera_pose", ck_surface_next_view, (&v, s1, &nan_pose, NULL));
        bad_k.fx = NAN;
        ERR(CK_E_INVALID_ARGUMENT, "intrinsics", ck_surface_next_view, (&v, s1, &front, &bad_k));
        v.struct_size = 64;
        ERR(CK_E_INVALID_ARGUMENT, "struct_size", ck_surface_next_view, (&v, s1, &front, NULL));
        v.struct_size = 1u << 20;
        ERR(CK_E_INVALID_ARGUMENT, "struct_size", ck_surface_next_view, (&v, s1, &front, NULL));
        v.struct_size = v2.struct_size;
        CHECK(memcmp(&v, &v2, sizeof v) == 0);
        /* Without depth (face cells): the side rule's target, no candidates. */
        CHECK_STATUS(ck_surface_reset(s1), CK_OK);
        CHECK_STATUS(ck_surface_next_view(&v, s1, &front, NULL), CK_OK);
        CHECK(v.candidates == 0 && v.gain == 0 && v.side >= 0);
        ck_surface_free(s1);
    }

    /* Grid, voxels and elements under the buffer rule. */
    CHECK_STATUS(ck_surface_grid_info(&g, s), CK_OK);
    CHECK(g.dims[0] == 128 && g.dims[1] == 128 && g.dims[2] == 128 && g.elements >= f.all.observed);
    ERR(CK_E_INVALID_ARGUMENT, "out", ck_surface_grid_info, (NULL, s));
    CHECK_STATUS(ck_surface_voxels(NULL, 0, &written, s), CK_E_BUFFER_TOO_SMALL);
    CHECK(written == 128u * 128u * 128u);
    vox = malloc(written);
    CHECK_STATUS(ck_surface_voxels(vox, written, &written, s), CK_OK);
    {
        size_t occ = 0, j;
        for (j = 0; j < written; j++) occ += vox[j] == CK_SURFACE_VOXEL_OCCUPIED;
        CHECK(occ == g.elements);
    }
    free(vox);
    ERR(CK_E_INVALID_ARGUMENT, "surface", ck_surface_voxels, (NULL, 0, &written, NULL));
    CHECK_STATUS(ck_surface_elements(NULL, 0, &written, s), CK_E_BUFFER_TOO_SMALL);
    CHECK(written == g.elements);
    el = malloc(written * sizeof *el);
    {   /* A capacity of more than SIZE_MAX/2 bytes describes no buffer: refused, nothing written. */
        size_t before = written;
        memset(el, 0xA5, written * sizeof *el);
        ERR(CK_E_INVALID_ARGUMENT, "SIZE_MAX/2 bytes", ck_surface_elements, (el, (SIZE_MAX / 2) / sizeof *el + 1, &written, s));
        CHECK(written == before && ((const unsigned char *)el)[0] == 0xA5);
    }
    CHECK_STATUS(ck_surface_elements(el, written, &written, s), CK_OK);
    {   /* Elements lie on the sphere (box frame: the box is centred on it) and carry the grey colour. */
        size_t j, off = 0, grey = 0;
        for (j = 0; j < written; j++) {
            float r = sqrtf(el[j].position[0] * el[j].position[0] + el[j].position[1] * el[j].position[1] +
                            el[j].position[2] * el[j].position[2]);
            if (fabsf(r - RADIUS) > 1.5f * g.voxel_size) off++;  /* bridged chords lie slightly inside */
            if ((el[j].flags & 4) && el[j].color[0] == 128) grey++;
        }
        CHECK(off == 0);
        CHECK(grey > written / 2);
    }
    free(el);
    ERR(CK_E_INVALID_ARGUMENT, "surface", ck_surface_elements, (NULL, 0, &written, NULL));

    /* PLY export. */
    CHECK_STATUS(ck_surface_export_ply(s, tmp_path("surface.ply"), CK_SURFACE_PLY_COVERAGE, 0), CK_OK);
    fp = fopen(tmp_path("surface.ply"), "rb");
    CHECK(fp != NULL && fread(head, 1, 4, fp) == 4 && memcmp(head, "ply\n", 4) == 0);
    if (fp) fclose(fp);
    CHECK_STATUS(ck_surface_export_ply(s, tmp_path("surface.ply"), CK_SURFACE_PLY_COVERAGE, 0), CK_E_EXISTS);
    CHECK_STATUS(ck_surface_export_ply(s, tmp_path("surface.ply"), CK_SURFACE_PLY_IMAGE, CK_OPEN_OVERWRITE), CK_OK);
    CHECK_STATUS(ck_surface_export_ply(s, tmp_path("missing/surface.ply"), CK_SURFACE_PLY_COVERAGE, 0), CK_E_NOT_FOUND);
    CHECK_STATUS(ck_surface_export_ply(s, tmp_path("surface.ply/x.ply"), CK_SURFACE_PLY_COVERAGE, 0), CK_E_IO);
    ERR(CK_E_INVALID_ARGUMENT, "colors", ck_surface_export_ply, (s, tmp_path("x.ply"), 7, 0));
    ERR(CK_E_INVALID_ARGUMENT, "flags", ck_surface_export_ply, (s, tmp_path("x.ply"), 0, 8));
    ERR(CK_E_INVALID_ARGUMENT, "path", ck_surface_export_ply, (s, NULL, 0, 0));
    ERR(CK_E_INVALID_ARGUMENT, "path", ck_surface_export_ply, (s, "", 0, 0));

    /* Box edits: re-expressed (a move keeps the surface where it is in the world). */
    {
        ck_box moved = box;
        moved.center.x += 0.03f;
        CHECK_STATUS(ck_surface_set_box(s, &moved), CK_OK);
        CHECK_STATUS(ck_surface_summarize(&f, s), CK_OK);
        CHECK(f.all.observed > 1000);
    }
    ERR(CK_E_INVALID_ARGUMENT, "box", ck_surface_set_box, (s, NULL));
    CHECK_STATUS(ck_surface_set_box(s, &bad_box), CK_E_INVALID_ARGUMENT);
    ERR(CK_E_INVALID_ARGUMENT, "surface", ck_surface_set_box, (NULL, &box));
    ERR(CK_E_INVALID_ARGUMENT, "surface", ck_surface_reset, (NULL));
    CHECK_STATUS(ck_surface_reset(s), CK_OK);
    CHECK_STATUS(ck_surface_summarize(&f, s), CK_OK);
    CHECK(f.from_depth == 0 && f.views == 0);
    ck_surface_free(s);

    /* The session's map: CK_E_STATE without a box, then fused from the frames it processes. */
    {
        ck_session_options so = CK_SESSION_OPTIONS_INIT;
        ck_session *ss = NULL;
        ck_session_frame fr;
        ck_session_result res;
        const ck_surface *borrowed = NULL;
        so.stream_depth = 0;
        REQUIRE(ck_session_frame_init(&fr));
        REQUIRE(ck_session_create(&ss, tmp_path("session"), &so, NULL));
        ERR(CK_E_STATE, NULL, ck_session_surface, (&borrowed, ss));
        ERR(CK_E_INVALID_ARGUMENT, "session", ck_session_surface, (&borrowed, NULL));
        ERR(CK_E_INVALID_ARGUMENT, "surface_out", ck_session_surface, (NULL, ss));
        REQUIRE(ck_session_set_box(ss, &box));
        CHECK_STATUS(ck_session_surface(&borrowed, ss), CK_OK);
        pose = orbit_pose(0, 12, 0.25f);
        render_sphere(depth, &pose, &k);
        fr.pose = pose; fr.intrinsics = k; fr.timestamp = 1.0;
        fr.depth = dm; fr.depth_intrinsics = k;
        REQUIRE(ck_session_process(&res, ss, &fr));
        CHECK_STATUS(ck_surface_summarize(&f, borrowed), CK_OK);
        CHECK(f.frames_fused == 1 && f.from_depth == 1 && f.all.observed > 100);
        ck_surface_free((ck_surface *)(uintptr_t)borrowed);   /* borrowed: does nothing */
        CHECK(strstr(ck_last_error_message(), "borrowed") != NULL);
        CHECK_STATUS(ck_surface_summarize(&f, borrowed), CK_OK);
        ck_session_close(ss);
    }

    /* A splat-ready dataset: the surface's image-coloured points become sparse_pc.ply, named by
     * transforms.json's ply_file_path, and the COLMAP export's points3D.txt. */
    {
        ck_dataset *ds = NULL, *ro = NULL;
        ck_surface *m = NULL;
        ck_frame_desc d;
        size_t n = 0, coloured = 0, lines = 0;
        char line[512], *text;
        long len;
        REQUIRE(ck_surface_create(&m, &box, NULL));
        REQUIRE(ck_dataset_create(&ds, tmp_path("splat"), NULL));
        for (i = 0; i < W * H * 3; i++) rgb[i] = (uint8_t)(i % 3 == 0 ? 200 : 30);   /* red views */
        img.data = rgb; img.width = W; img.height = H; img.stride = 0; img.format = CK_IMAGE_FORMAT_RGB8; img.reserved = 0;
        for (i = 0; i < 8; i++) {
            pose = orbit_pose(i, 8, 0.25f);
            render_sphere(depth, &pose, &k);
            REQUIRE(ck_surface_fuse(m, &dm, NULL, &k, &pose, (double)i));
            REQUIRE(ck_frame_desc_init(&d));
            d.timestamp = (double)i; d.pose = pose; d.intrinsics = k; d.image = img;
            REQUIRE(ck_dataset_add_frame(NULL, ds, &d));
        }
        /* No view with an image yet: no coloured point, so no point cloud. */
        CHECK_STATUS(ck_dataset_set_surface(ds, m), CK_OK);
        CHECK_STATUS(ck_dataset_finalize(ds, 0, NULL), CK_OK);
        CHECK(!file_exists(tmp_path("splat/sparse_pc.ply")));
        for (i = 0; i < 8; i++) {
            pose = orbit_pose(i, 8, 0.25f);
            REQUIRE(ck_surface_add_view(NULL, m, &pose, &k, &img, (double)i));
        }
        CHECK_STATUS(ck_surface_elements(NULL, 0, &n, m), CK_E_BUFFER_TOO_SMALL);
        el = malloc(n * sizeof *el);
        REQUIRE(ck_surface_elements(el, n, &n, m));
        for (i = 0; i < (int)n; i++) if (el[i].flags & 4) coloured++;
        free(el);
        CHECK(coloured > 100);
        ERR(CK_E_INVALID_ARGUMENT, "dataset", ck_dataset_set_surface, (NULL, m));
        CHECK_STATUS(ck_dataset_set_surface(ds, m), CK_OK);
        CHECK_STATUS(ck_dataset_finalize(ds, 0, NULL), CK_OK);
        CHECK(file_exists(tmp_path("splat/sparse_pc.ply")));
        fp = fopen(tmp_path("splat/transforms.json"), "rb");
        CHECK(fp != NULL);
        if (fp) {
            fseek(fp, 0, SEEK_END); len = ftell(fp); fseek(fp, 0, SEEK_SET);
            text = calloc((size_t)len + 1, 1);
            CHECK(fread(text, 1, (size_t)len, fp) == (size_t)len);
            fclose(fp);
            CHECK(strstr(text, "\"ply_file_path\": \"sparse_pc.ply\"") != NULL);
            free(text);
        }
        /* The PLY holds exactly the coloured elements, red (the views' colour). */
        fp = fopen(tmp_path("splat/sparse_pc.ply"), "rb");
        CHECK(fp != NULL);
        if (fp) {
            size_t count = 0;
            while (fgets(line, sizeof line, fp) && strcmp(line, "end_header\n") != 0)
                if (sscanf(line, "element vertex %zu", &count) == 1) CHECK(count == coloured);
            if (count > 0) {
                unsigned char rec[28];
                CHECK(fread(rec, 1, 28, fp) == 28);
                CHECK(rec[24] == 200 && rec[25] == 30 && rec[26] == 30);
            }
            fclose(fp);
        }
        CHECK_STATUS(ck_dataset_export_colmap(tmp_path("splat"), tmp_path("splat-colmap")), CK_OK);
        fp = fopen(tmp_path("splat-colmap/points3D.txt"), "r");
        CHECK(fp != NULL);
        if (fp) {
            while (fgets(line, sizeof line, fp)) {
                unsigned id, r, gg, b;
                float x, y, z, err;
                if (line[0] == '#') continue;
                CHECK(sscanf(line, "%u %f %f %f %u %u %u %f", &id, &x, &y, &z, &r, &gg, &b, &err) == 8);
                CHECK(id == lines + 1 && r == 200 && gg == 30 && b == 30 && err == 0.0f);
                /* On the sphere (voxel centres: within a voxel's half diagonal of it). */
                CHECK_NEAR(sqrtf((x - CENTRE[0]) * (x - CENTRE[0]) + (y - CENTRE[1]) * (y - CENTRE[1])
                                 + (z - CENTRE[2]) * (z - CENTRE[2])), RADIUS, 0.5f / 128 * 0.87f + 1e-4f);
                lines++;
            }
            fclose(fp);
        }
        CHECK(lines == coloured);
        /* A point cloud the export does not read (big-endian PLY): CK_E_UNSUPPORTED, nothing written. */
        fp = fopen(tmp_path("splat/sparse_pc.ply"), "wb");
        if (fp) {
            fputs("ply\nformat binary_big_endian 1.0\nelement vertex 0\nproperty float x\nend_header\n", fp);
            fclose(fp);
        }
        ERR(CK_E_UNSUPPORTED, NULL, ck_dataset_export_colmap, (tmp_path("splat"), tmp_path("splat-colmap2")));
        CHECK(!file_exists(tmp_path("splat-colmap2/points3D.txt")));
        /* A truncated one: CK_E_CORRUPT. */
        fp = fopen(tmp_path("splat/sparse_pc.ply"), "wb");
        if (fp) {
            fputs("ply\nformat binary_little_endian 1.0\nelement vertex 5\nproperty float x\nproperty float y\n"
                  "property float z\nend_header\n", fp);
            fputs("0123456789", fp);
            fclose(fp);
        }
        ERR(CK_E_CORRUPT, NULL, ck_dataset_export_colmap, (tmp_path("splat"), tmp_path("splat-colmap3")));
        CHECK(!file_exists(tmp_path("splat-colmap3/points3D.txt")));
        /* Clearing: the next finalize removes the point cloud and its name. */
        CHECK_STATUS(ck_dataset_set_surface(ds, NULL), CK_OK);
        CHECK_STATUS(ck_dataset_finalize(ds, 0, NULL), CK_OK);
        CHECK(!file_exists(tmp_path("splat/sparse_pc.ply")));
        CHECK_STATUS(ck_dataset_close(ds), CK_OK);
        /* Read-only: refused, nothing changes. */
        REQUIRE(ck_dataset_open_readonly(&ro, tmp_path("splat")));
        ERR(CK_E_STATE, NULL, ck_dataset_set_surface, (ro, m));
        CHECK_STATUS(ck_dataset_close(ro), CK_OK);
        ck_surface_free(m);
    }

    remove_tree(g_dir);
    return CHECK_SUMMARY();
}
