/*
 * support.h — the one support header of the C programs here that are not examples: the C API
 * tests (Tests/capi/test_NAME.c) and the C benchmarks (benchmarks/bench_NAME.c). It holds what
 * they would otherwise each repeat: the check framework, REQUIRE for "must succeed" calls, look_at,
 * a temporary folder (g_dir, tmp_path) and remove_tree. It only adds helpers: no library name is
 * redefined, so every call in a program that includes it is the real 0.2 call shape.
 * (examples/c stay single self-contained files: they are what users copy.)
 *
 * Include it once per program, after capturekit.h and the system headers (feature-test macros such
 * as _XOPEN_SOURCE 700 must come first: mkdtemp and lstat are POSIX). Every check counts into
 * g_passed / g_failed; a failed check prints one line "file:line: FAILED: ..." to stderr.
 * CHECK_SUMMARY() prints the one summary line "N passed, M failed" and gives the exit status (1 on
 * a failure):
 *
 *     return CHECK_SUMMARY();
 *
 * Everything is `static inline` (one translation unit per program), so a program that uses only
 * part of it compiles cleanly under -Wunused-function.
 */
#ifndef CK_TESTS_CAPI_SUPPORT_H
#define CK_TESTS_CAPI_SUPPORT_H

#include "capturekit.h"

#include <dirent.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int g_passed, g_failed;

static inline void check_report(int ok, const char *file, int line, const char *fmt, ...)
{
    va_list ap;
    if (ok) { g_passed++; return; }
    g_failed++;
    fprintf(stderr, "%s:%d: FAILED: ", file, line);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
}

/** CHECK(condition): one check. */
#define CHECK(cond) check_report((cond) ? 1 : 0, __FILE__, __LINE__, "%s", #cond)

/** CHECK_NEAR(a, b, tol): |a - b| <= tol, printing both values on failure. */
#define CHECK_NEAR(a, b, tol) check_near((double)(a), (double)(b), (double)(tol), #a, #b, __FILE__, __LINE__)

static inline void check_near(double a, double b, double tol, const char *ea, const char *eb, const char *file,
                              int line)
{
    check_report(fabs(a - b) <= tol, file, line, "|%s - %s| <= %g (%.9g vs %.9g)", ea, eb, tol, a, b);
}

/** CHECK_STATUS(call, want): the call returns `want`. */
#define CHECK_STATUS(call, want) check_status((call), (want), #call, __FILE__, __LINE__)

static inline void check_status(ck_status got, ck_status want, const char *expr, const char *file, int line)
{
    check_report(got == want, file, line, "%s returned %d (%s), want %d (%s); last error: \"%s\"", expr, (int)got,
                 ck_status_string(got), (int)want, ck_status_string(want), ck_last_error_message());
}

/**
 * ERR(want, argname, fn, (args...)): fn(args...) returns the negative status `want`, and the
 * thread-local message names the function and (if argname is not NULL) the argument at fault.
 */
#define ERR(want, argname, fn, args) check_err((fn args), (want), #fn, (argname), #fn #args, __FILE__, __LINE__)

static inline void check_err(ck_status got, ck_status want, const char *fn, const char *arg, const char *expr,
                      const char *file, int line)
{
    const char *msg = ck_last_error_message();
    int ok = got == want && msg != NULL && strstr(msg, fn) != NULL && (arg == NULL || strstr(msg, arg) != NULL);
    check_report(ok, file, line, "%s returned %d (%s), want %d (%s); message \"%s\" must name \"%s\" and \"%s\"", expr,
                 (int)got, ck_status_string(got), (int)want, ck_status_string(want), msg ? msg : "(NULL)", fn,
                 arg ? arg : "");
}

/**
 * CHECK_SAME(what, mismatches, first): a bulk comparison found no mismatch; otherwise print how
 * many and the first one (`first` is a short description prepared by the caller).
 */
#define CHECK_SAME(what, mismatches, first) \
    check_report((mismatches) == 0, __FILE__, __LINE__, "%s: %lu mismatches, first: %s", (what), \
                 (unsigned long)(mismatches), (first))

/** STATIC_ASSERT(cond, name): a compile-time check (C99: negative-array typedef). */
#define STATIC_ASSERT(cond, name) typedef char static_assert_##name[(cond) ? 1 : -1]

/** CHECK_SUMMARY(): prints "N passed, M failed" to stdout; evaluates to 0, or 1 on a failure. */
#define CHECK_SUMMARY() (printf("%d passed, %d failed\n", g_passed, g_failed), g_failed == 0 ? 0 : 1)

/** REQUIRE(call): a ck_status call that must not fail (benchmarks, set-up): on a negative status,
 *  print the call, the status and the library's message, then exit(1). */
#define REQUIRE(call) do { ck_status s_ = (call); if (s_ < 0) { \
    fprintf(stderr, "%s:%d: %s -> %s: %s\n", __FILE__, __LINE__, #call, ck_status_string(s_), ck_last_error_message()); \
    exit(1); } } while (0)

/** A camera-to-world pose at `eye` looking at `target` (OpenGL camera axes: -Z forward, +Y up as
 *  close to world +Y as the view allows). eye and target must differ and not be straight above
 *  each other. */
static inline ck_mat4 look_at(const float eye[3], const float target[3])
{
    float f[3], r[3], u[3], n;
    ck_mat4 m;
    int i;
    for (i = 0; i < 3; i++) f[i] = target[i] - eye[i];
    n = sqrtf(f[0] * f[0] + f[1] * f[1] + f[2] * f[2]);
    for (i = 0; i < 3; i++) f[i] /= n;
    r[0] = -f[2]; r[1] = 0; r[2] = f[0];
    n = sqrtf(r[0] * r[0] + r[2] * r[2]);
    r[0] /= n; r[2] /= n;
    u[0] = r[1] * f[2] - r[2] * f[1]; u[1] = r[2] * f[0] - r[0] * f[2]; u[2] = r[0] * f[1] - r[1] * f[0];
    memset(&m, 0, sizeof m);
    for (i = 0; i < 3; i++) { m.m[i] = r[i]; m.m[4 + i] = u[i]; m.m[8 + i] = -f[i]; m.m[12 + i] = eye[i]; }
    m.m[15] = 1;
    return m;
}

/** Removes a file, or a folder and everything in it (symbolic links are removed, not followed). */
static inline void remove_tree(const char *path)
{
    struct stat st;
    DIR *d;
    struct dirent *e;
    if (lstat(path, &st) != 0) return;
    if (!S_ISDIR(st.st_mode) || (d = opendir(path)) == NULL) { unlink(path); return; }
    while ((e = readdir(d)) != NULL) {
        char sub[4096];
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
        if (snprintf(sub, sizeof sub, "%s/%s", path, e->d_name) >= (int)sizeof sub) continue; /* too deep: left */
        remove_tree(sub);
    }
    closedir(d);
    rmdir(path);
}

/** The program's temporary folder, made by tmp_dir_create. */
static char g_dir[64];

/** Creates a new empty folder /tmp/<tag>-XXXXXX into g_dir; 0 on success (else perror and -1). */
static inline int tmp_dir_create(const char *tag)
{
    snprintf(g_dir, sizeof g_dir, "/tmp/%s-XXXXXX", tag);
    if (mkdtemp(g_dir) != NULL) return 0;
    perror("mkdtemp");
    return -1;
}

/** g_dir/name, in one of 8 rotating static buffers (so a call may use up to 8 at once). */
static inline const char *tmp_path(const char *name)
{
    static char buf[8][512];
    static int slot;
    char *p = buf[slot++ & 7];
    snprintf(p, sizeof buf[0], "%s/%s", g_dir, name);
    return p;
}

#endif /* CK_TESTS_CAPI_SUPPORT_H */
