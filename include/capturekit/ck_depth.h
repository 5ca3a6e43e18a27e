/* Depth and confidence: conversions, the native frame codec and .ckdepth files, MultiScan-compatible
 * zlib streams (PNG and JPEG files: ck_image.h). Part of the CaptureKit C API; include
 * <capturekit.h>, not this file. */
#ifndef CAPTUREKIT_CK_DEPTH_H
#define CAPTUREKIT_CK_DEPTH_H

#include "ck_geometry.h"
#include "ck_image.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Outputs on error, for every function in this header: an out-parameter (`*_out`) is written only
 * on CK_OK, with two exceptions: *written_out of ck_depth_encode also gets the
 * needed size on CK_E_BUFFER_TOO_SMALL, and the handle of an open/create function is set to NULL
 * on failure (when the pointer to it is not NULL). Caller buffers: ck_depth_convert,
 * ck_depth_decode, ck_depth_reader_read, ck_zstream_reader_next and ck_zstream_reader_read write
 * dst only on CK_OK (untouched after any error); ck_depth_encode may have written part of dst
 * before failing (its contents are then unspecified). */

/* ============================================================================================
 * Sample formats and conversions
 *
 * Depth rules, identical in every function: 0 means invalid (no return). NaN, negative values,
 * +inf and values that do not fit the target become 0. float32 -> float16 rounds to nearest, ties
 * to even (bit-exact with IEEE); a value that would round above 65504 m is out of range, so 0.
 * metres -> millimetres rounds to nearest (half away from zero); above 65535 mm (65.535 m) is out
 * of range, so 0. float16 and millimetre values convert to float32 exactly (mm: value / 1000,
 * correctly rounded). float16 buffers hold IEEE binary16 bit patterns as uint16_t (native endian).
 * ============================================================================================ */

/** Converts `count` samples from `src_format` to `dst_format` (any pair of the three depth formats,
 *  or U8 to U8), following the depth rules above. dst and src must not overlap unless identical
 *  formats. count may be 0 (then the pointers may be NULL). dst is untouched on error.
 *  @return CK_OK; CK_E_INVALID_ARGUMENT (NULL, unknown format, U8 <-> depth, count too large). Since 0.1. */
CK_API ck_status ck_depth_convert(void *dst, int32_t dst_format, const void *src, int32_t src_format, size_t count);

/** The world points of a depth map's valid pixels, row by row (for fitting the box, finding the
 *  floor, checks). depth: z-depth (distance along the optical axis, as ARKit's sceneDepth) in any
 *  depth format; a pixel is valid when its depth is finite, > 0 and <= max_depth (metres; inf =
 *  no limit). Pixel (x, y) is the ray through its centre (x + 0.5, y + 0.5) of `intrinsics`,
 *  which must be the depth map's (its size: ck_intrinsics_scale the image's); camera_pose is
 *  camera-to-world, OpenGL camera axes. dst_capacity and *written_out count points; a too small
 *  dst gets nothing and *written_out the number of valid pixels.
 *  @return CK_OK; CK_E_BUFFER_TOO_SMALL; CK_E_INVALID_ARGUMENT (NULL, a map, intrinsics or pose
 *  that fails its checks, max_depth NaN or <= 0, a dst_capacity of more than SIZE_MAX/2 bytes).
 *  Since 0.2. */
CK_API ck_status ck_depth_to_points(ck_vec3 *dst, size_t dst_capacity, size_t *written_out, const ck_depth_map *depth,
                                    const ck_intrinsics *intrinsics, const ck_mat4 *camera_pose, float max_depth);

/* ============================================================================================
 * Native frame codec (in memory)
 *
 * Lossless. A depth frame is stored as float16 metres (from F32 or F16 input) or as millimetres
 * (from MM input); a U8 frame as bytes. Each encoded frame is self-describing (magic, kind, width,
 * height) and is decoded into any compatible format. Decoding treats its input as hostile: any
 * malformed frame gives CK_E_CORRUPT and never reads or writes outside the given buffers.
 * ============================================================================================ */

/** Largest accepted frame dimension (width and height), pixels. */
#define CK_DEPTH_MAX_DIMENSION 16384u

/** Stored kinds of an encoded frame or a .ckdepth file. */
typedef enum ck_depth_kind {
    CK_DEPTH_KIND_FLOAT16 = 1,   /**< float16 metres */
    CK_DEPTH_KIND_MM = 2,        /**< uint16 millimetres */
    CK_DEPTH_KIND_U8 = 3         /**< uint8 (confidence) */
} ck_depth_kind;

/** A reusable encoder/decoder (holds zstd contexts and scratch memory). One thread at a time. */
typedef struct ck_depth_codec ck_depth_codec;

/** The archival level (a `level` value for ck_depth_codec_create and ck_depth_writer_open): the
 *  same frame version as every level, compressed harder (zstd 19; per frame the smallest of byte
 *  rows only, the default row layout, and the default level's frame, so never larger than the
 *  default): on real sensor depth 1.4-2.5x smaller
 *  than the simple peer (left delta + byte planes + zstd-1), decoding at full speed, encoding
 *  about a hundred times slower (a few 640 x 480 frames per second). For transcoding and
 *  long-term storage, never the capture path. Since 0.2. */
#define CK_DEPTH_LEVEL_ARCHIVAL 19

/** Creates a codec. level: zstd level 1..19, or 0 for the default (1, chosen by measurement);
 *  CK_DEPTH_LEVEL_ARCHIVAL for archives.
 *  *codec_out is NULL on failure.
 *  @return CK_OK; CK_E_INVALID_ARGUMENT; CK_E_NO_MEMORY. Since 0.1. */
CK_API ck_status ck_depth_codec_create(ck_depth_codec **codec_out, int32_t level);

/** Frees a codec; NULL is accepted. Since 0.1. */
CK_API void ck_depth_codec_free(ck_depth_codec *codec);

/** Worst-case encoded size of a width x height frame given in `src_format`; 0 for invalid
 *  arguments (zero or too large dimensions, unknown format). Since 0.1. */
CK_API size_t ck_depth_encode_bound(uint32_t width, uint32_t height, int32_t src_format);

/** Encodes one frame: the map `src` (any depth format, or U8; rows `stride` apart).
 *  F32 input is converted to float16 (depth rules) before encoding. After an error dst may hold
 *  part of an encoded frame (unspecified bytes); *written_out is written only as stated below.
 *  @return CK_OK with *written_out; CK_E_BUFFER_TOO_SMALL (dst_capacity below what this frame
 *  needs; *written_out = ck_depth_encode_bound(...)); CK_E_INVALID_ARGUMENT. Since 0.1. */
CK_API ck_status ck_depth_encode(void *dst, size_t dst_capacity, size_t *written_out, ck_depth_codec *codec,
                                 const ck_depth_map *src);

/** Reads an encoded frame's header: kind, width, height (no output may be NULL; all are written
 *  only on CK_OK).
 *  @return CK_OK; CK_E_CORRUPT; CK_E_INVALID_ARGUMENT. Since 0.1. */
CK_API ck_status ck_depth_frame_info(int32_t *kind_out, uint32_t *width_out, uint32_t *height_out,
                                     const void *src, size_t src_size);

/** Decodes one frame into dst as `dst_format` (any depth format for depth kinds, U8 for U8), tightly
 *  packed; *written_out (may be NULL) gets the bytes written. dst_capacity must be at least width x
 *  height x ck_format_size(dst_format) bytes. The whole frame is checked before dst is written: dst
 *  is written only on CK_OK and untouched after any error.
 *  @return CK_OK; CK_E_CORRUPT; CK_E_BUFFER_TOO_SMALL (*written_out = the bytes needed);
 *  CK_E_INVALID_ARGUMENT (incl. a format that
 *  does not fit the frame's kind). Since 0.1. */
CK_API ck_status ck_depth_decode(void *dst, size_t dst_capacity, size_t *written_out, ck_depth_codec *codec,
                                 const void *src, size_t src_size, int32_t dst_format);

/* ============================================================================================
 * .ckdepth files: a self-describing, seekable, crash-safe recording of native frames
 *
 * A 64-byte file header (magic "CKDEPTH\0", version, width, height, kind, codec) followed by frame
 * records, each with its own header (magic, index, payload size, CRC-32 of the payload, timestamp).
 * Appends go straight to the file (no whole-recording buffers); ck_depth_writer_flush() makes them
 * durable (fsync). Reopening a file cut short by a crash drops the torn last record and keeps every
 * complete one. Readers are random-access (an index of record offsets is built on open).
 * ============================================================================================ */

typedef struct ck_depth_writer ck_depth_writer;
typedef struct ck_depth_reader ck_depth_reader;

/** Writer flags (OR-able). */
#define CK_OPEN_OVERWRITE 1u  /**< replace an existing file (otherwise an existing file is CK_E_EXISTS) */
#define CK_OPEN_APPEND    2u  /**< reopen an existing file and append (its width/height/kind must match);
                                   a torn last record is truncated away; a missing file is created */

/** Opens a .ckdepth file for writing frames of `kind` (CK_DEPTH_KIND_*). level as ck_depth_codec_create.
 *  *writer_out is NULL on failure.
 *  @return CK_OK; CK_E_EXISTS (file exists without OVERWRITE/APPEND); CK_E_CORRUPT (APPEND to a file
 *  that is not a matching .ckdepth); CK_E_UNSUPPORTED (APPEND to a file of a newer format version);
 *  CK_E_NOT_FOUND (no such directory); CK_E_IO;
 *  CK_E_INVALID_ARGUMENT. Since 0.1. */
CK_API ck_status ck_depth_writer_open(ck_depth_writer **writer_out, const char *path, uint32_t width,
                                      uint32_t height, int32_t kind, int32_t level, uint32_t flags);

/** Appends one frame (width x height samples of `src_format`, compatible with the file's kind) with
 *  its timestamp (seconds, finite). @return CK_OK; CK_E_IO; CK_E_INVALID_ARGUMENT; CK_E_STATE
 *  (after an I/O error the writer refuses further frames). Since 0.1. */
CK_API ck_status ck_depth_writer_append(ck_depth_writer *writer, const ck_depth_map *src, double timestamp);

/** Makes every appended frame durable (fsync). @return CK_OK; CK_E_IO; CK_E_INVALID_ARGUMENT. Since 0.1. */
CK_API ck_status ck_depth_writer_flush(ck_depth_writer *writer);

/** Frames in the file (including those found on reopen). @return CK_OK; CK_E_INVALID_ARGUMENT (NULL). Since 0.1. */
CK_API ck_status ck_depth_writer_frame_count(uint64_t *count_out, const ck_depth_writer *writer);

/** Flushes and closes the file, then frees the writer (NULL accepted; the writer is freed even on
 *  error). @return CK_OK; CK_E_IO. Since 0.1. */
CK_API ck_status ck_depth_writer_close(ck_depth_writer *writer);

/** Summary of a .ckdepth file. */
typedef struct ck_depth_info {
    uint32_t width, height;
    int32_t kind;            /**< CK_DEPTH_KIND_* */
    uint32_t version;        /**< file format version (1) */
    uint64_t frame_count;    /**< complete, intact-looking records */
    uint64_t torn_bytes;     /**< bytes after the last complete record (a crash's torn tail), ignored */
} ck_depth_info;             /* 32 bytes, frozen */

/** Opens a .ckdepth file for random-access reading; *reader_out is NULL on failure. @return CK_OK; CK_E_IO; CK_E_NOT_FOUND (no
 *  such file); CK_E_CORRUPT (not a .ckdepth file, or a damaged header); CK_E_UNSUPPORTED (a newer
 *  format version); CK_E_INVALID_ARGUMENT. Since 0.1. */
CK_API ck_status ck_depth_reader_open(ck_depth_reader **reader_out, const char *path);

/** The file's summary. @return CK_OK; CK_E_INVALID_ARGUMENT (NULL). Since 0.1. */
CK_API ck_status ck_depth_reader_info(ck_depth_info *info_out, const ck_depth_reader *reader);

/** Decodes frame `index` into dst as `dst_format`, tightly packed; *written_out (may be NULL) gets
 *  the bytes written and *timestamp_out (may be NULL) the frame's time. dst, *written_out and
 *  *timestamp_out are written only on CK_OK (untouched after any error, except *written_out on
 *  CK_E_BUFFER_TOO_SMALL: the bytes needed).
 *  @return CK_OK; CK_END (index >= frame count); CK_E_CORRUPT (the record fails its CRC or does not
 *  decode; the message names the frame); CK_E_BUFFER_TOO_SMALL; CK_E_IO; CK_E_INVALID_ARGUMENT. Since 0.1. */
CK_API ck_status ck_depth_reader_read(void *dst, size_t dst_capacity, size_t *written_out, double *timestamp_out,
                                      ck_depth_reader *reader, uint64_t index, int32_t dst_format);

/** Closes and frees a reader. @return CK_OK (also for NULL). Since 0.2 (0.1: ck_depth_reader_free). */
CK_API ck_status ck_depth_reader_close(ck_depth_reader *reader);

/* ============================================================================================
 * MultiScan-compatible streams (<scan>.depth.zlib, <scan>.confidence.zlib)
 *
 * ONE raw DEFLATE stream (RFC 1951, no zlib header) over all frames: height x width float16 metres
 * (depth) or uint8 (confidence), little-endian, row-major, no per-frame header. A full flush after
 * every frame keeps the file decodable frame by frame even when a crash cuts it short, and lets an
 * optional side index (<path>.idx: little-endian uint64 compressed offsets, one per frame start, the
 * first 0; each is a restart point for a fresh raw inflater) seek to any frame. MultiScan's decoders
 * (Python zlib.decompressobj(-15) + numpy) read the files. Memory is bounded by a frame or two.
 *
 * Truncation: readers deliver every complete frame. Data that stops exactly at a frame boundary (a
 * crash right after an append, with or without the final block) ends cleanly: CK_END. Data that
 * stops inside a frame: CK_E_CORRUPT naming that frame. Raw DEFLATE has no checksum: most damage is
 * rejected by zlib (CK_E_CORRUPT naming the frame), a flipped bit inside literal data is not.
 * Damage is sticky, as in zlib: once a reader reported that zlib rejected the data (or that the
 * final block ends inside a frame), every later call on it returns CK_E_CORRUPT; a stream that only
 * ends inside a frame (cut short, or still being written) is retried by later calls.
 * The side index is validated against the stream when the reader opens: it must start at 0,
 * increase and lie in the file, every entry must end a flush marker and no flush marker may lie
 * between two entries unless decoding that frame shows it is a chance occurrence inside compressed
 * data (so a deleted, shifted or stale entry is caught), a fresh inflater must start decoding at
 * every entry (an entry added at such a chance marker fails this: a heuristic catch, the others are
 * exact), the frame before the last entry must end there with the stream going on (no entry after
 * the final block), and the last indexed frame must decode. This reads the compressed file once
 * (decompressing only a few hundred bytes per entry). An index that fails is ignored
 * (frames are then found by decoding: slower, same results), never trusted; a restart point that
 * still fails falls back to decoding from the start. The checks are structural: they rely on every
 * flush marker ending a frame, as this library's writer makes them. A stream with damage zlib
 * cannot see, or with another writer's flushes inside frames, paired with an index that lists
 * exactly those markers, can pass them; frames read through it are then as wrong as that damaged
 * stream's own frames (see RELIABILITY.md).
 * ============================================================================================ */

typedef struct ck_zstream_writer ck_zstream_writer;
typedef struct ck_zstream_reader ck_zstream_reader;

/** Writer flag: also write the side index <path>.idx (readers never require it). */
#define CK_ZSTREAM_INDEX 4u

/** Default zlib level of the stream writer (chosen by measurement, see BENCHMARKS.md). */
#define CK_ZSTREAM_DEFAULT_LEVEL 1

/** Opens a stream for frames stored as `stored_format`: CK_FORMAT_DEPTH_F16 (depth) or CK_FORMAT_U8
 *  (confidence); width and height 1..CK_DEPTH_MAX_DIMENSION. level: zlib 1..9, or 0 for
 *  CK_ZSTREAM_DEFAULT_LEVEL. flags: CK_OPEN_OVERWRITE, CK_ZSTREAM_INDEX (other bits are invalid).
 *  Without CK_OPEN_OVERWRITE an existing path (or, with CK_ZSTREAM_INDEX, <path>.idx) is refused;
 *  with it, both are replaced and a stale <path>.idx is removed when no index is written.
 *  *writer_out is NULL on failure. @return CK_OK; CK_E_EXISTS (exists without OVERWRITE);
 *  CK_E_NOT_FOUND (no such directory); CK_E_IO; CK_E_INVALID_ARGUMENT. Since 0.1. */
CK_API ck_status ck_zstream_writer_open(ck_zstream_writer **writer_out, const char *path, uint32_t width,
                                        uint32_t height, int32_t stored_format, int32_t level, uint32_t flags);

/** Appends one frame: the map `src` (the writer's width x height; F32 metres, converted by the depth
 *  rules, or F16 for depth streams; U8 for confidence; rows `stride` apart, any alignment). The frame is compressed
 *  with a full flush and written to the file (and its offset to <path>.idx) before the call returns,
 *  so a process killed afterwards loses no frame appended with CK_OK (a power loss needs close's
 *  fsync). A failed write cuts the file(s) back to the previous frame and fails the writer.
 *  @return CK_OK; CK_E_IO; CK_E_STATE (the writer failed earlier); CK_E_INVALID_ARGUMENT (not
 *  sticky). Since 0.1. */
CK_API ck_status ck_zstream_writer_append(ck_zstream_writer *writer, const ck_depth_map *src);

/** Frames appended so far. @return CK_OK; CK_E_INVALID_ARGUMENT (NULL). Since 0.1. */
CK_API ck_status ck_zstream_writer_frame_count(uint64_t *count_out, const ck_zstream_writer *writer);

/** Ends the stream (final block), fsyncs and closes the file(s) and fsyncs their directory, frees
 *  the writer (NULL accepted; freed even on error). After a failed append the stream is ended after
 *  the last complete frame. @return CK_OK; CK_E_IO (the final block or the fsync failed, or an
 *  earlier failed write could not be cut back: the message says which). Since 0.1. */
CK_API ck_status ck_zstream_writer_close(ck_zstream_writer *writer);

/** Opens a stream for reading frames of width x height `stored_format` (as written); uses
 *  <path>.idx when it is present and valid. *reader_out is NULL on failure.
 *  @return CK_OK; CK_E_NOT_FOUND; CK_E_IO; CK_E_INVALID_ARGUMENT. Since 0.1. */
CK_API ck_status ck_zstream_reader_open(ck_zstream_reader **reader_out, const char *path, uint32_t width,
                                        uint32_t height, int32_t stored_format);

/** Number of complete frames (decodes the stream once unless a valid side index is present; a
 *  truncated tail is not counted). @return CK_OK; CK_E_CORRUPT (damage before the end: the message
 *  names the frame; sticky, see above); CK_E_IO; CK_E_INVALID_ARGUMENT (NULL). Since 0.1. */
CK_API ck_status ck_zstream_reader_frame_count(uint64_t *count_out, ck_zstream_reader *reader);

/** Decodes the next frame into dst as `dst_format` (F32, F16 or MM for depth streams, U8 for
 *  confidence), tightly packed; dst_capacity >= width x height x ck_format_size(dst_format), any
 *  alignment; *written_out (may be NULL) gets the bytes written (the bytes needed on
 *  CK_E_BUFFER_TOO_SMALL). dst is written only on CK_OK. On CK_END or CK_E_CORRUPT the position stays, so a later call retries
 *  (a file still being written may have grown), except after damage (sticky: CK_E_CORRUPT again).
 *  @return CK_OK; CK_END (no more complete frames: the stream ended cleanly); CK_E_CORRUPT (the
 *  stream is damaged or cut short inside this frame: the message names it; every earlier frame was
 *  delivered); CK_E_BUFFER_TOO_SMALL; CK_E_IO; CK_E_INVALID_ARGUMENT. Since 0.1. */
CK_API ck_status ck_zstream_reader_next(void *dst, size_t dst_capacity, size_t *written_out,
                                        ck_zstream_reader *reader, int32_t dst_format);

/** Decodes frame `index` (using the side index when present, else decoding from the nearest
 *  earlier position it knows; frame offsets found while decoding are remembered). Same outcomes as
 *  ck_zstream_reader_next (CK_E_CORRUPT names the first damaged frame at or before `index`; any
 *  index past the last frame, UINT64_MAX included, is CK_END); afterwards next() continues with
 *  index + 1 (with `index` after CK_END or CK_E_CORRUPT). @return CK_OK; CK_END; CK_E_CORRUPT; CK_E_BUFFER_TOO_SMALL; CK_E_IO; CK_E_INVALID_ARGUMENT. Since 0.1. */
CK_API ck_status ck_zstream_reader_read(void *dst, size_t dst_capacity, size_t *written_out,
                                        ck_zstream_reader *reader, uint64_t index, int32_t dst_format);

/** Closes and frees a reader. @return CK_OK (also for NULL). Since 0.2 (0.1: ck_zstream_reader_free). */
CK_API ck_status ck_zstream_reader_close(ck_zstream_reader *reader);

/* ============================================================================================
 * Transcoding between MultiScan streams and .ckdepth
 * ============================================================================================ */

/** Flag for ck_transcode_zstream_to_ckdepth: write the .ckdepth file at CK_DEPTH_LEVEL_ARCHIVAL
 *  (smaller, encoding much slower). Since 0.2. */
#define CK_TRANSCODE_ARCHIVAL 8u

/** Converts a MultiScan stream (width x height, stored_format F16 or U8) into a new .ckdepth file.
 *  flags: CK_OPEN_OVERWRITE, CK_TRANSCODE_ARCHIVAL.
 *  timestamps: one per frame (may be NULL: then frame i gets time i). Stops at the last complete
 *  frame of a truncated or damaged stream; a stream whose first frame is damaged is CK_E_CORRUPT
 *  and no destination is written. *frames_out (may be NULL) gets the frames written.
 *  @return CK_OK; CK_E_EXISTS (destination exists and flags lacks CK_OPEN_OVERWRITE); CK_E_CORRUPT;
 *  CK_E_NOT_FOUND; CK_E_IO; CK_E_INVALID_ARGUMENT. Since 0.1. */
CK_API ck_status ck_transcode_zstream_to_ckdepth(uint64_t *frames_out, const char *dst_path, const char *src_path,
                                                 uint32_t width, uint32_t height, int32_t stored_format,
                                                 const double *timestamps, size_t timestamp_count,
                                                 uint32_t flags);

/** Converts a .ckdepth file of kind FLOAT16 or U8 into a MultiScan stream (level as the writer;
 *  flags: CK_OPEN_OVERWRITE, CK_ZSTREAM_INDEX). Same outcomes. @return CK_OK; CK_E_EXISTS (destination exists and flags lacks CK_OPEN_OVERWRITE); CK_E_CORRUPT; CK_E_NOT_FOUND; CK_E_IO; CK_E_INVALID_ARGUMENT (incl. a file of kind MM). Since 0.1. */
CK_API ck_status ck_transcode_ckdepth_to_zstream(uint64_t *frames_out, const char *dst_path, const char *src_path,
                                                 int32_t level, uint32_t flags);

#ifdef __cplusplus
}
#endif

#endif /* CAPTUREKIT_CK_DEPTH_H */
