/*
 * check.h — the tiny check framework shared by the C API tests (Tests/capi/test_*.c).
 *
 * Include it once per program, after capturekit.h and the system headers (feature-test macros such
 * as _XOPEN_SOURCE must come first). Every check counts into g_passed / g_failed; a failed check
 * prints one line "file:line: FAILED: ..." to stderr. CHECK_SUMMARY() prints the one summary line
 * "N passed, M failed" and gives the exit status (1 on a failure):
 *
 *     return CHECK_SUMMARY();
 *
 * The helpers are static (one translation unit per program). check_near is `static inline` so a
 * program that never uses CHECK_NEAR compiles cleanly under -Wunused-function.
 */
#ifndef CK_TESTS_CAPI_CHECK_H
#define CK_TESTS_CAPI_CHECK_H

#include "capturekit.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static int g_passed, g_failed;

static void check_report(int ok, const char *file, int line, const char *fmt, ...)
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

static void check_status(ck_status got, ck_status want, const char *expr, const char *file, int line)
{
    check_report(got == want, file, line, "%s returned %d (%s), want %d (%s); last error: \"%s\"", expr, (int)got,
                 ck_status_string(got), (int)want, ck_status_string(want), ck_last_error_message());
}

/**
 * ERR(want, argname, fn, (args...)): fn(args...) returns the negative status `want`, and the
 * thread-local message names the function and (if argname is not NULL) the argument at fault.
 */
#define ERR(want, argname, fn, args) check_err((fn args), (want), #fn, (argname), #fn #args, __FILE__, __LINE__)

static void check_err(ck_status got, ck_status want, const char *fn, const char *arg, const char *expr,
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

#endif /* CK_TESTS_CAPI_CHECK_H */
