/* JPEG-XL lossless (libjxl, modular mode) as a depth peer: one 16-bit grayscale image per frame,
 * single-threaded (no parallel runner), effort set by jxl_set_effort (1 = fastest). Built only
 * when libjxl is installed (scripts/bootstrap installs libjxl-dev); see benchmarks/bench_codec.c. */
#include <jxl/decode.h>
#include <jxl/encode.h>
#include <string.h>
#include "peers.h"

static int effort = 1;
void jxl_set_effort(int e) { effort = e; }

size_t jxl_bound(uint32_t w, uint32_t h) { return (size_t)w * h * 3 + 4096; }

long jxl_encode(uint8_t *dst, size_t cap, const uint16_t *src, uint32_t w, uint32_t h) {
    JxlEncoder *enc = JxlEncoderCreate(NULL);
    if (!enc) return -1;
    long result = -1;
    JxlBasicInfo info;
    JxlEncoderInitBasicInfo(&info);
    info.xsize = w;
    info.ysize = h;
    info.bits_per_sample = 16;
    info.num_color_channels = 1;
    info.uses_original_profile = JXL_TRUE;
    JxlColorEncoding color;
    JxlColorEncodingSetToLinearSRGB(&color, JXL_TRUE);
    JxlPixelFormat fmt = {1, JXL_TYPE_UINT16, JXL_LITTLE_ENDIAN, 0};
    JxlEncoderFrameSettings *fs;
    if (JxlEncoderSetBasicInfo(enc, &info) != JXL_ENC_SUCCESS) goto out;
    if (JxlEncoderSetColorEncoding(enc, &color) != JXL_ENC_SUCCESS) goto out;
    fs = JxlEncoderFrameSettingsCreate(enc, NULL);
    if (JxlEncoderSetFrameLossless(fs, JXL_TRUE) != JXL_ENC_SUCCESS) goto out;
    if (JxlEncoderFrameSettingsSetOption(fs, JXL_ENC_FRAME_SETTING_EFFORT, effort) != JXL_ENC_SUCCESS) goto out;
    if (JxlEncoderAddImageFrame(fs, &fmt, src, (size_t)w * h * 2) != JXL_ENC_SUCCESS) goto out;
    JxlEncoderCloseInput(enc);
    uint8_t *next = dst;
    size_t avail = cap;
    if (JxlEncoderProcessOutput(enc, &next, &avail) != JXL_ENC_SUCCESS) goto out;
    result = (long)(cap - avail);
out:
    JxlEncoderDestroy(enc);
    return result;
}

int jxl_decode(uint16_t *dst, const uint8_t *src, size_t size, uint32_t w, uint32_t h) {
    JxlDecoder *dec = JxlDecoderCreate(NULL);
    if (!dec) return -1;
    int rc = -1;
    JxlPixelFormat fmt = {1, JXL_TYPE_UINT16, JXL_LITTLE_ENDIAN, 0};
    if (JxlDecoderSubscribeEvents(dec, JXL_DEC_BASIC_INFO | JXL_DEC_FULL_IMAGE) != JXL_DEC_SUCCESS) goto out;
    JxlDecoderSetInput(dec, src, size);
    JxlDecoderCloseInput(dec);
    for (;;) {
        JxlDecoderStatus s = JxlDecoderProcessInput(dec);
        if (s == JXL_DEC_BASIC_INFO) {
            JxlBasicInfo info;
            if (JxlDecoderGetBasicInfo(dec, &info) != JXL_DEC_SUCCESS || info.xsize != w || info.ysize != h) goto out;
        } else if (s == JXL_DEC_NEED_IMAGE_OUT_BUFFER) {
            if (JxlDecoderSetImageOutBuffer(dec, &fmt, dst, (size_t)w * h * 2) != JXL_DEC_SUCCESS) goto out;
        } else if (s == JXL_DEC_FULL_IMAGE) {
            continue;
        } else if (s == JXL_DEC_SUCCESS) {
            rc = 0;
            break;
        } else {
            goto out;
        }
    }
out:
    JxlDecoderDestroy(dec);
    return rc;
}
