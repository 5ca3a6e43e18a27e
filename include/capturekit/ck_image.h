/* Pixel buffers: sample and image formats, and the two descriptors every call that takes a caller's
 * image or depth map uses (ck_image, ck_depth_map). Part of the CaptureKit C API; include
 * <capturekit.h>, not this file. Since 0.2. */
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

#ifdef __cplusplus
}
#endif

#endif /* CAPTUREKIT_CK_IMAGE_H */
