/* Status codes, errors, version, memory. Part of the CaptureKit C API; include <capturekit.h>, not this file. */
#ifndef CAPTUREKIT_CK_BASE_H
#define CAPTUREKIT_CK_BASE_H

#include <stddef.h>
#include <stdint.h>
#include <stdbool.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__) || defined(__clang__)
#  define CK_API __attribute__((visibility("default")))
#else
#  define CK_API
#endif

/* ============================================================================================
 * Status and version
 * ============================================================================================ */

/** Version of this header. Same major = ABI compatible, except while the major is 0: then the
 *  minor version must match too (0.x minor releases may break the ABI; README "Changes").
 *  CK_VERSION_NUMBER = MAJOR*10000+MINOR*100+PATCH. */
#define CK_VERSION_MAJOR 0
#define CK_VERSION_MINOR 2
#define CK_VERSION_PATCH 0
#define CK_VERSION_NUMBER (CK_VERSION_MAJOR * 10000 + CK_VERSION_MINOR * 100 + CK_VERSION_PATCH)
#define CK_VERSION_STRING "0.2.0"
/** Nonzero if a library of version number `n` (ck_version_number()) can serve this header: same
 *  major, and while the major is 0 the same minor. Check it at startup. Since 0.2. */
#define CK_VERSION_COMPATIBLE(n) \
    ((n) / 10000 == CK_VERSION_MAJOR && (CK_VERSION_MAJOR != 0 || (n) / 100 % 100 == CK_VERSION_MINOR))

/** Status codes. Explicit values, append only, never renumbered or reused. */
typedef int32_t ck_status;
#define CK_OK                     0  /**< success */
#define CK_MISS                   1  /**< normal outcome: the ray hits nothing (outputs say so) */
#define CK_END                    2  /**< normal outcome: no more items (the end of a recording) */
#define CK_E_INVALID_ARGUMENT   (-1) /**< NULL, NaN/inf, out of range or inconsistent argument */
#define CK_E_BUFFER_TOO_SMALL   (-2) /**< caller buffer too small; the needed size is reported */
#define CK_E_IO                 (-3) /**< file system error (depth, dataset and scan sections) */
#define CK_E_CORRUPT            (-4) /**< malformed or truncated input data (depth, dataset and scan sections) */
#define CK_E_STATE              (-5) /**< the call is not valid in the object's current state */
#define CK_E_UNSUPPORTED        (-6) /**< valid request this build or version does not support */
#define CK_E_NOT_FOUND          (-7) /**< nothing to work on (e.g. no usable points) */
#define CK_E_NO_MEMORY          (-8) /**< an allocation failed (depth and dataset sections) */
#define CK_E_EXISTS             (-9) /**< a file or folder is in the way that the call does not replace
                                          (pass the overwrite flag, or another path); since 0.2 (0.1: CK_E_STATE) */
#define CK_E_BUSY              (-10) /**< the dataset folder is open for writing by another handle, in this
                                          process or another (the message names the folder and the holder's
                                          pid); nothing was changed; since 0.2 */

/** Static English name of a status ("CK_E_INVALID_ARGUMENT: invalid argument"); never NULL;
 *  "unknown status" for codes not listed above. Since 0.1. */
CK_API const char *ck_status_string(ck_status status);

/** Detail of the last failure on the calling thread; never NULL ("" if none yet). Library-owned,
 *  valid until the next failing call on this thread. Only failing calls set it. Since 0.1. */
CK_API const char *ck_last_error_message(void);

/** Runtime version number of the loaded library (compare with CK_VERSION_NUMBER). Since 0.1. */
CK_API uint32_t ck_version_number(void);

/** Runtime version string, static: CK_VERSION_STRING of the header the library was built from. Since 0.1. */
CK_API const char *ck_version_string(void);

/** Frees memory the library allocated for the caller. NULL is accepted. Since 0.1. */
CK_API void ck_free(void *ptr);

#ifdef __cplusplus
}
#endif

#endif /* CAPTUREKIT_CK_BASE_H */
