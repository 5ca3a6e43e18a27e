/* Pixel buffers and image files: sample and image formats, the two descriptors every call that
 * takes a caller's image or depth map uses (ck_image, ck_depth_map), and PNG and JPEG files. Part
 * of the CaptureKit C API; include <capturekit.h>, not this file. Since 0.2 (the PNG and JPEG
 * functions were declared in ck_depth.h until 0.2.0; same functions, same ABI). */
#ifndef CAPTUREKIT_CK_IMAGE_H
#define CAPTUREKIT_CK_IMAGE_H

#include "ck_base.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Sample formats of depth and confidence buffers (the caller's side of every depth call). */
typedef enum ck_format {
    CK_FORMAT_DEPTH_F32 = 1,  /**< float, metres */
    CK_FORMAT_DEPTH_F16 = 2,  /**< uint16_t IEEE binary16 bit patterns, metres */
    CK_FORMAT_DEPTH_MM = 3,   /**< uint16_t millimetres */
    CK_FORMAT_U8 = 4          /**< uint8_t (confidence: 0 low, 1 medium, 2 high; any value is kept) */
} ck_format;

/** Pixel layouts of images (PNG files, dataset images, sharpness). Since 0.2 (0.1: ck_png_format,
 *  CK_PNG_*, same values). */
typedef enum ck_image_format {
    CK_IMAGE_FORMAT_NONE = 0,    /**< no pixels (a dataset frame whose image file the caller writes) */
    CK_IMAGE_FORMAT_GRAY8 = 1,
    CK_IMAGE_FORMAT_RGB8 = 2,
    CK_IMAGE_FORMAT_RGBA8 = 3,
    CK_IMAGE_FORMAT_GRAY16 = 4,  /**< uint16_t, native endian (depth PNGs in millimetres) */
    /* Camera-native layouts, accepted as a dataset frame's or session frame's image (since 0.2):
     * converted to RGB8 by the dataset's writer, off the caller's thread. */
    CK_IMAGE_FORMAT_BGRA8 = 5,      /**< B, G, R, A bytes (CoreVideo 32BGRA); alpha ignored */
    CK_IMAGE_FORMAT_NV12_FULL = 6,  /**< bi-planar 4:2:0 Y'CbCr, full range (ARKit's capturedImage): `data`
                                         and `stride` are the 8-bit Y plane; the frame's image_chroma is the
                                         plane of interleaved Cb, Cr bytes (ceil(w/2) pairs x ceil(h/2) rows).
                                         BT.601 matrix, as ARKit's sample code converts capturedImage */
    CK_IMAGE_FORMAT_NV12_VIDEO = 7  /**< the same, video range (Y 16...235, Cb/Cr 16...240) */
} ck_image_format;

/** A caller's image: `height` rows of `width` pixels, row r at (const uint8_t *)data + r * stride.
 *  stride 0 = tightly packed; otherwise at least a row's bytes, and (height - 1) * stride + a row
 *  must fit in memory. Borrowed for the duration of the call. A value type, frozen. */
typedef struct ck_image {
    const void *data;          /**< the top-left pixel; NULL = no image */
    uint32_t width, height;    /**< pixels */
    size_t stride;             /**< bytes from one row to the next; 0 = width * pixel size */
    int32_t format;            /**< a ck_image_format */
    uint32_t reserved;         /**< 0 */
} ck_image;                                                        /* 32 bytes on 64-bit, frozen */

/** A caller's depth or confidence map, the same way: `format` is a ck_format (depth formats for
 *  depth, CK_FORMAT_U8 for confidence). Values follow the depth rules of ck_depth.h (0 = invalid;
 *  NaN, negative and +inf count as invalid). */
typedef struct ck_depth_map {
    const void *data;          /**< the first sample; NULL = no map */
    uint32_t width, height;    /**< samples */
    size_t stride;             /**< bytes from one row to the next; 0 = width * ck_format_size(format) */
    int32_t format;            /**< a ck_format */
    uint32_t reserved;         /**< 0 */
} ck_depth_map;                                                    /* 32 bytes on 64-bit, frozen */

/** Bytes per sample of a ck_format (0 for an unknown format). Since 0.1. */
CK_API size_t ck_format_size(int32_t format);

/* ============================================================================================
 * Image files: PNG (written and read with zlib alone) and JPEG (written through libjpeg-turbo)
 *
 * Outputs on error: an out-parameter (`*_out`) is written only on CK_OK, except *written_out of
 * ck_png_encode, ck_png_decode, ck_png_read and ck_jpeg_encode, which also gets the needed size on
 * CK_E_BUFFER_TOO_SMALL. ck_png_encode, ck_jpeg_encode, ck_png_decode and ck_png_read may have
 * written part of dst before failing (its contents are then unspecified).
 *
 * PNG:
 *
 * 8-bit gray, RGB, RGBA and 16-bit gray (depth in millimetres), non-interlaced. 16-bit samples are
 * given and returned in native endianness (PNG stores them big-endian). The writer picks a filter
 * per row (the smallest sum of absolute residuals; see BENCHMARKS.md) and writes one zlib stream in
 * IDAT chunks of at most 256 KiB. The reader treats its input as hostile: it checks the signature
 * and every chunk's CRC, accepts every filter and any IDAT split, skips ancillary chunks, requires
 * exactly height x (1 + row bytes) bytes of image data and IEND, never reads or writes outside the
 * given buffers, and rejects what it does not support (palette, gray+alpha, 16-bit colour, bit
 * depths below 8, interlace, unknown critical chunks, sides above CK_PNG_MAX_DIMENSION) with
 * CK_E_UNSUPPORTED. The PNG functions are stateless and safe to call from any thread.
 * ============================================================================================ */

/** Largest accepted PNG width or height. */
#define CK_PNG_MAX_DIMENSION 32768u

/** Worst-case size of an encoded PNG; 0 for invalid arguments. Since 0.1. */
CK_API size_t ck_png_encode_bound(uint32_t width, uint32_t height, int32_t format);

/** Encodes an image (any ck_image_format but NONE; rows `stride` bytes apart) as a PNG in memory.
 *  The caller owns dst; *written_out gets the PNG's size. dst may be NULL when dst_capacity is 0
 *  (a size query). level: 0 for the default, chosen by measurement (BENCHMARKS.md): zlib's
 *  run-length strategy (Z_RLE), as fast as level 1 and smaller (on 16-bit depth ~4% larger than
 *  level 6 at ~6x its speed); or 1..9 for zlib's filtered-data strategy at that level (9: smallest).
 *  @return CK_OK; CK_E_BUFFER_TOO_SMALL (the PNG does not fit in dst_capacity; *written_out = the
 *  bound, which always suffices); CK_E_INVALID_ARGUMENT; CK_E_NO_MEMORY. Since 0.1. */
CK_API ck_status ck_png_encode(void *dst, size_t dst_capacity, size_t *written_out, const ck_image *image,
                               int32_t level);

/** Writes a PNG file atomically (temporary file, fsync, rename): a reader never sees half a file,
 *  and a failure leaves no file behind (with CK_OPEN_OVERWRITE: the old one). path: UTF-8. image
 *  and level as ck_png_encode. flags: CK_OPEN_OVERWRITE (ck_depth.h; otherwise an existing
 *  file is CK_E_EXISTS).
 *  @return CK_OK; CK_E_EXISTS; CK_E_NOT_FOUND (no such directory); CK_E_IO; CK_E_INVALID_ARGUMENT.
 *  Since 0.1. */
CK_API ck_status ck_png_write(const char *path, const ck_image *image, int32_t level, uint32_t flags);

/** Worst-case size of a JPEG from ck_jpeg_encode (libjpeg-turbo's bound); 0 for invalid
 *  arguments (sides 0 or above 65535, CK_IMAGE_FORMAT_GRAY16 or an unknown format). Since 0.2. */
CK_API size_t ck_jpeg_encode_bound(uint32_t width, uint32_t height, int32_t format);

/** Encodes an 8-bit image (CK_IMAGE_FORMAT_GRAY8, RGB8 or RGBA8; rows `stride` bytes apart) as a
 *  baseline JPEG in memory through libjpeg-turbo, as a dataset with CK_IMAGE_ENCODING_JPEG writes
 *  its images: 4:2:0 chroma (gray: one channel), alpha dropped. quality: 1...100, 0 = 90.
 *  dst_capacity must be at least ck_jpeg_encode_bound (dst may be NULL with capacity 0: a size
 *  query); *written_out gets the JPEG's size. Stateless and safe from any thread.
 *  @return CK_OK; CK_E_BUFFER_TOO_SMALL (*written_out = the bound); CK_E_UNSUPPORTED (GRAY16);
 *  CK_E_INVALID_ARGUMENT; CK_E_NO_MEMORY. Since 0.2. */
CK_API ck_status ck_jpeg_encode(void *dst, size_t dst_capacity, size_t *written_out, const ck_image *image,
                                int32_t quality);

/** Reads a PNG's dimensions and format (CK_IMAGE_FORMAT_*) from memory: the signature and IHDR only (the
 *  rest is checked by ck_png_decode). No output may be NULL.
 *  @return CK_OK; CK_E_CORRUPT; CK_E_UNSUPPORTED; CK_E_INVALID_ARGUMENT. Since 0.1. */
CK_API ck_status ck_png_info(uint32_t *width_out, uint32_t *height_out, int32_t *format_out,
                             const void *src, size_t src_size);

/** Decodes a PNG from memory into tightly packed rows (width x bytes per pixel); dst_capacity must
 *  be at least width x height x bytes per pixel (from ck_png_info); *written_out (may be NULL) gets
 *  the bytes written (the bytes needed on CK_E_BUFFER_TOO_SMALL). After an error dst may hold part
 *  of the image.
 *  @return CK_OK; CK_E_CORRUPT (bad signature, chunk CRC or order, zlib stream, image data size,
 *  missing IEND); CK_E_UNSUPPORTED; CK_E_BUFFER_TOO_SMALL; CK_E_INVALID_ARGUMENT. Since 0.1. */
CK_API ck_status ck_png_decode(void *dst, size_t dst_capacity, size_t *written_out, const void *src, size_t src_size);

/** ck_png_info for a file (path: UTF-8). @return as ck_png_info, plus CK_E_NOT_FOUND and CK_E_IO.
 *  Since 0.1. */
CK_API ck_status ck_png_read_info(uint32_t *width_out, uint32_t *height_out, int32_t *format_out, const char *path);

/** ck_png_decode for a file (path: UTF-8; files above 1 GiB are CK_E_UNSUPPORTED).
 *  @return as ck_png_decode, plus CK_E_NOT_FOUND and CK_E_IO. Since 0.1. */
CK_API ck_status ck_png_read(void *dst, size_t dst_capacity, size_t *written_out, const char *path);

#ifdef __cplusplus
}
#endif

#endif /* CAPTUREKIT_CK_IMAGE_H */
