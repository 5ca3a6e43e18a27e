/* Fuses N frames of a sphere (as benchmarks/bench_surface.py renders them) through ck_surface_fuse and
 * prints hashes of the map, so that instruction counts (valgrind --tool=callgrind) and the map before and
 * after a change can be compared. Usage: surface_fuse_count [W H N [RADIUS]] (BENCHMARKS.md). */
#include <capturekit.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
static void look_at(const double c[3], const double eye[3], ck_mat4 *m) {
    double z[3] = {eye[0]-c[0], eye[1]-c[1], eye[2]-c[2]}, n = sqrt(z[0]*z[0]+z[1]*z[1]+z[2]*z[2]);
    for (int i=0;i<3;i++) z[i]/=n;
    double x[3] = {z[2], 0, -z[0]}; n = sqrt(x[0]*x[0]+x[2]*x[2]); x[0]/=n; x[2]/=n;   /* (0,1,0) x z */
    double y[3] = {z[1]*x[2]-z[2]*x[1], z[2]*x[0]-z[0]*x[2], z[0]*x[1]-z[1]*x[0]};
    float *f = (float*)m; memset(f, 0, 64);
    for (int i=0;i<3;i++){ f[0*4+i]=x[i]; f[1*4+i]=y[i]; f[2*4+i]=z[i]; f[3*4+i]=eye[i]; } f[15]=1;
}
int main(int argc, char **argv) {
    int w = argc > 1 ? atoi(argv[1]) : 256, h = argc > 2 ? atoi(argv[2]) : 192, frames = argc > 3 ? atoi(argv[3]) : 20;
    double C[3] = {0, 0.5, 0}, R = argc > 4 ? atof(argv[4]) : 0.15; float f = 0.82f * w;
    ck_box box; ck_vec3 cc = {0, 0.5f, 0}, sz = {0.5f, 0.5f, 0.5f};
    if (ck_box_init(&box, cc, sz, 0) != CK_OK) return 1;
    ck_surface *s; if (ck_surface_create(&s, &box, NULL) != CK_OK) return 2;
    ck_intrinsics k = {f, f, w/2.0f, h/2.0f, (uint32_t)w, (uint32_t)h};
    float *d = malloc(sizeof(float)*w*h);
    double total = 0;
    for (int i = 0; i < frames; i++) {
        double a = 2*M_PI*i/60, e = (20 + 15*sin(3*a))*M_PI/180;
        double eye[3] = {C[0]+0.7*sin(a)*cos(e), C[1]+0.7*sin(e), C[2]-0.7*cos(a)*cos(e)};
        ck_mat4 m; look_at(C, eye, &m); float *M = (float*)&m;
        for (int y=0;y<h;y++) for (int x=0;x<w;x++) {
            double u=(x+0.5-w/2.0)/f, v=-(y+0.5-h/2.0)/f, dc[3]={u,v,-1}, dw[3];
            for (int r=0;r<3;r++) dw[r]=M[0*4+r]*dc[0]+M[1*4+r]*dc[1]+M[2*4+r]*dc[2];
            double o[3]={eye[0]-C[0],eye[1]-C[1],eye[2]-C[2]};
            double A=dw[0]*dw[0]+dw[1]*dw[1]+dw[2]*dw[2], B=2*(dw[0]*o[0]+dw[1]*o[1]+dw[2]*o[2]), Cc=o[0]*o[0]+o[1]*o[1]+o[2]*o[2]-R*R;
            double disc=B*B-4*A*Cc, t=(-B-sqrt(disc>0?disc:0))/(2*A);
            d[y*w+x] = (disc>0 && t>0) ? (float)t : 2.0f;
        }
        ck_depth_map dm = {d, (uint32_t)w, (uint32_t)h, 0, CK_FORMAT_DEPTH_F32, 0};
        struct timespec t0, t1; clock_gettime(CLOCK_MONOTONIC, &t0);
        if (ck_surface_fuse(s, &dm, NULL, &k, &m, i) != CK_OK) { puts(ck_last_error_message()); return 3; }
        clock_gettime(CLOCK_MONOTONIC, &t1);
        total += (t1.tv_sec-t0.tv_sec)*1e3 + (t1.tv_nsec-t0.tv_nsec)/1e6;
    }
    ck_surface_figures fg; ck_surface_summarize(&fg, s);
    size_t n = 0; ck_surface_elements(NULL, 0, &n, s);
    ck_surface_element *el = malloc(sizeof *el * (n ? n : 1)); ck_surface_elements(el, n, &n, s);
    size_t vn = 0; ck_surface_voxels(NULL, 0, &vn, s); unsigned char *vx = malloc(vn); ck_surface_voxels(vx, vn, &vn, s);
    unsigned long hsh = 1469598103934665603UL; for (size_t i=0;i<vn;i++){ hsh^=vx[i]; hsh*=1099511628211UL; }
    double sx=0; for (size_t i=0;i<n;i++) sx += el[i].position[0]+2*el[i].position[1]+3*el[i].position[2]+el[i].normal[0]+el[i].normal[1]*5;
    printf("%dx%d frames %d: mean %.3f ms; elements %zu observed %u frontier %u voxelhash %016lx elsum %.6f\n",
           w, h, frames, total/frames, n, fg.all.observed, fg.all.frontier, hsh, sx);
    ck_surface_free(s); return 0;
}
