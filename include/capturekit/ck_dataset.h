/* Datasets and the per-frame capture session. Part of the CaptureKit C API; include
 * <capturekit.h>, not this file. */
#ifndef CAPTUREKIT_CK_DATASET_H
#define CAPTUREKIT_CK_DATASET_H

#include "ck_guidance.h"
#include "ck_depth.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ============================================================================================
 * Dataset folder
 *
 * A folder that nerfstudio, instant-ngp and MultiScan's tools open unchanged:
 *
 *   transforms.json          nerfstudio + instant-ngp (frames, intrinsics, poses, depth PNGs)
 *   boundingbox.json         the object's box (reference app format + size + floor + passes)
 *   images/NNNNNN.png        captured images (written by the library, or by the caller under
 *                            the name the library gives)
 *   depth/NNNNNN.png         16-bit depth in millimetres, 0 = unknown (nerfstudio, instant-ngp)
 *   <scan>.depth.zlib        MultiScan streams of every streamed frame: float16 depth,
 *   <scan>.confidence.zlib   uint8 confidence,
 *   <scan>.jsonl             camera info (one JSON line per streamed frame),
 *   <scan>.json              scan metadata
 *   events.jsonl             the scan's history: every guidance, quality and storage event
 *   capturekit.jsonl         the dataset's journal (source of truth for reopening)
 *   .capturekit.lock         the one-writer lock (holds the writer's pid; never exported or zipped)
 *
 * One writer per dataset (since 0.2): every writable handle (ck_dataset_create, ck_dataset_open,
 * ck_session_create, ck_session_resume) holds an exclusive flock() on .capturekit.lock for its
 * whole life (until close, cancel, or the end of the process: the kernel drops it, so a killed
 * process never leaves a stale lock). A second writable open of the same folder, in any process
 * or thread (the same process included), is CK_E_BUSY naming the folder and the holder's pid,
 * and changes nothing. ck_dataset_open_readonly takes no lock and is allowed while a writer is
 * live: it sees the journal's whole lines only.
 *
 * Writing off the caller's thread (since 0.2): by default (CK_WRITE_MODE_BACKGROUND) a frame
 * given to ck_dataset_add_frame or ck_dataset_stream_frame (and so to ck_session_process) is
 * copied into a bounded queue and returned at once; one background thread per dataset encodes and
 * writes it, then journals it. The thread is started by create/open and joined by close, cancel
 * and finalize. A call that returns CK_OK has QUEUED its frame: the frame is durable once a later
 * ck_dataset_flush / ck_session_flush (or finalize, or close) returns CK_OK. A session can hand a capture's image over instead of lending it (no copy): see
 * ck_session_frame.image_release.
 *
 * A failed write is sticky (since 0.2): the first write that fails (an image, a depth PNG, a
 * stream frame, a camera-info or journal line, an event, a manifest; on the background thread or
 * the caller's; a full disk, an I/O error, the folder deleted) makes the dataset FAILED. The next
 * call reports it as CK_E_IO naming the file (with how many queued writes were discarded), and
 * every later writing call on the dataset or its session (add, stream, box, pass, event, remove,
 * flush, finalize, process, finish, close) returns the same CK_E_IO, even once the disk is fine
 * again: never CK_OK after a frame was lost, and no session result says captured after the
 * failure. A flush or close also checks that the journal is still in its folder: a dataset
 * folder deleted while open is this CK_E_IO (never CK_E_NOT_FOUND), even when no write failed. Nothing of a failed frame stays whole on disk; close releases the handle (and the lock)
 * and reports the failure. Reopen the dataset (ck_dataset_open, ck_session_resume) to go on: it
 * finds every frame of the last successful flush.
 *
 * Crash safety: a crash loses at most the frames queued and not yet flushed; every frame whose
 * add returned before the last successful flush is on disk whole. Every other call that returns
 * CK_OK (boxes, passes, removals, events) and, in CK_WRITE_MODE_SYNC, every add, has made its effect
 * durable in the journal and the files it names (JSON files: temporary file + fsync + rename; JSON
 * lines and streams: flushed appends). A frame's journal line is written only after its files are
 * durable. After a crash, ck_dataset_open() finds every journaled frame, drops a torn tail and the
 * files of frames that never reached the journal, and finalising gives valid files.
 *
 * The MultiScan streams (since 0.2) are journaled by checkpoints: at least every 60 stream frames,
 * before a captured frame that names a stream frame, and at every flush, close and finalize, the
 * streams and camera-info lines are made durable and then their frame count and byte ends are
 * journaled. A crash loses the stream frames after the last checkpoint; ck_dataset_open (and
 * ck_session_resume) cuts each stream after its last journaled frame (checked by decoding: a
 * journaled end that is not a whole-frame boundary inside the file is CK_E_CORRUPT, and nothing
 * is cut) and continues it with a fresh raw-DEFLATE compressor, so one inflate over the whole file
 * (MultiScan's decoders) reads every frame, old and new, and the camera-info lines and the scan
 * metadata count exactly the same frames. Paths from callers are relative to the folder and
 * may not escape it (absolute paths, "..", empty components and backslashes are rejected);
 * existing files are never silently overwritten.
 *
 * Everything read back from the folder is treated as hostile input: the journal's numbers are
 * range-checked (frame ids 0..2^40-1, passes 0..2^20-1), its scan id and options pass the same
 * rules as on creation, its paths the same path rules as callers' paths, and the library never
 * deletes through a symbolic link. A damaged journal gives CK_E_CORRUPT, never a crash.
 *
 * Validate, then repair (since 0.2): ck_dataset_open and ck_session_resume first check everything
 * (every journal line and stream checkpoint with all its fields; each stream file named by the
 * last checkpoint decoded WHOLE, from its first byte, as exactly the journaled frames ending at a
 * full flush, and no stream file the checkpoint does not name; the camera-info file's line count
 * and its lines since the previous checkpoint and in the last MiB parsed, by one rule for open and
 * resume; the folder layout: images/, depth/ real folders, the journal, manifests, events and
 * stream files regular files; and, for resume, the session's own checks), and only then repair
 * (cut a torn journal line, delete orphan files, cut the streams). A refusal leaves every byte and
 * every name in the folder as it was. A stream cannot begin after the first stream frame (a frame
 * carrying depth or confidence the first one did not is CK_E_INVALID_ARGUMENT).
 * ============================================================================================ */

typedef struct ck_dataset ck_dataset;

/** Dataset options. Start from CK_DATASET_OPTIONS_INIT or ck_dataset_options_init(). Strings are
 *  copied; NULL means "not given". */
typedef struct ck_dataset_options {
    uint32_t struct_size;
    uint32_t depth_png_width;    /**< depth PNG resolution; 0 = the image's (instant-ngp needs equal sizes) */
    uint32_t depth_png_height;   /**< 0 = the image's */
    int32_t zlib_level;          /**< MultiScan streams: 0 = CK_ZSTREAM_DEFAULT_LEVEL, else 1..9 */
    int32_t png_level;           /**< PNG zlib level: 0 = default, else 1..9 */
    uint32_t reserved;           /**< 0 */
    double start_time_unix;      /**< scan start, seconds since 1970 UTC, for the MultiScan scan id; finite;
                                      required (not 0) to stream (ck_dataset_stream_frame, sessions) */
    const char *device_id;       /**< MultiScan device id (scan id suffix); NULL = "capturekit" */
    const char *device_name;     /**< metadata: device name, type, user, scene; NULL = "" */
    const char *device_type;
    const char *user_name;
    const char *scene_description;
    const char *scene_type;
    /* Since 0.2. */
    const char *color_encoding;  /**< the host's colour video of the scan, MultiScan's <scan>.<ext>
                                      ("h264"; 1-16 letters, digits or '_'), or NULL: the host writes
                                      none. The metadata's colour stream then has encoding "none" and
                                      the video is not counted in number_of_files */
    const char *color_file_extension; /**< its extension without the dot ("mp4"; 1-7 letters or
                                      digits); required with color_encoding, else NULL */
    int32_t write_mode;          /**< a ck_write_mode: CK_WRITE_MODE_BACKGROUND (0, default) or CK_WRITE_MODE_SYNC */
    uint32_t write_queue_mb;     /**< background writer: the most MiB of frames queued (0 = 256; at most
                                      65536); a full queue makes an add wait (a session can drop instead) */
    int32_t image_encoding;      /**< a ck_image_encoding: how images given as pixels are stored (default
                                      CK_IMAGE_ENCODING_PNG); since 0.2 */
    int32_t jpeg_quality;        /**< CK_IMAGE_ENCODING_JPEG's quality, 1...100 (0 = 90) */
    uint32_t image_downscales;   /**< CK_DOWNSCALE_* flags: also write each library image downscaled 2x, 4x
                                      or 8x into images_2/, images_4/, images_8/ (same name and encoding; what
                                      nerfstudio's downscale_factor reads); 0 = none; since 0.2 */
    uint32_t reserved3;          /**< 0 */
} ck_dataset_options;

/** ck_dataset_options.image_downscales flags (the value is the factor). Each halving averages 2x2
 *  pixel blocks (rounded); a side is floor(side / 2) per halving (an odd last row or column is
 *  dropped). transforms.json keeps the full-size intrinsics (nerfstudio scales them itself).
 *  Images the caller writes (image_path) are not downscaled. Since 0.2. */
#define CK_DOWNSCALE_2 2u
#define CK_DOWNSCALE_4 4u
#define CK_DOWNSCALE_8 8u

/** How a dataset stores the images it is given as pixels (ck_dataset_options.image_encoding).
 *  Depth PNGs are always 16-bit PNG. Since 0.2. */
typedef enum ck_image_encoding {
    CK_IMAGE_ENCODING_PNG = 0,  /**< images/NNNNNN.png, lossless (every ck_image_format) */
    CK_IMAGE_ENCODING_JPEG = 1  /**< images/NNNNNN.jpg through libjpeg-turbo: baseline, 4:2:0 chroma (gray
                                     images: one channel), alpha dropped; not for CK_IMAGE_FORMAT_GRAY16 */
} ck_image_encoding;

/** Where frames are encoded and written (ck_dataset_options.write_mode). Since 0.2. */
typedef enum ck_write_mode {
    CK_WRITE_MODE_BACKGROUND = 0, /**< a bounded queue and one background thread: adds return at once */
    CK_WRITE_MODE_SYNC = 1        /**< on the caller's thread: every add is durable when it returns */
} ck_write_mode;

#define CK_DATASET_OPTIONS_INIT { (uint32_t)sizeof(ck_dataset_options), 0u, 0u, 0, 0, 0u, 0.0, \
    NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, CK_WRITE_MODE_BACKGROUND, 0u, CK_IMAGE_ENCODING_PNG, 0, 0u, 0u }

/** Fills *options_out with the defaults. Writes the first struct_size bytes only, struct_size included:
 *  pass sizeof(ck_dataset_options) (the ck_dataset_options_init() macro below does). @return CK_OK;
 *  CK_E_INVALID_ARGUMENT (NULL, struct_size below the first release's 80 bytes); CK_E_UNSUPPORTED
 *  (struct_size above this library's size: a header newer than the library). Since 0.2. */
CK_API ck_status ck_dataset_options_init_sized(ck_dataset_options *options_out, size_t struct_size);
/** ck_dataset_options_init_sized() for a caller that cannot pass its size (a binary built before 0.2's
 *  sized calls, an FFI calling this symbol): writes the first release's layout only (80 bytes on
 *  64-bit, struct_size 80), never more, so an older, smaller layout is not overrun; fields added since
 *  keep their defaults when the library reads the struct. In C and C++ the macro below maps
 *  ck_dataset_options_init() to ck_dataset_options_init_sized(). @return CK_OK; CK_E_INVALID_ARGUMENT
 *  (NULL). Since 0.1. */
CK_API ck_status ck_dataset_options_init(ck_dataset_options *options_out);
#define ck_dataset_options_init(options_out) ck_dataset_options_init_sized((options_out), sizeof(ck_dataset_options))

/** Creates a dataset in folder `dir` (created if missing; it must be empty).
 *  @return CK_OK; CK_E_EXISTS (the folder is not empty: use ck_dataset_open to resume);
 *  CK_E_NOT_FOUND (its parent folder is missing); CK_E_BUSY (another handle is creating or writing
 *  a dataset there); CK_E_IO; CK_E_INVALID_ARGUMENT; CK_E_UNSUPPORTED (options from a newer header). Since 0.1. */
CK_API ck_status ck_dataset_create(ck_dataset **dataset_out, const char *dir, const ck_dataset_options *options);

/** Reopens a dataset (after a crash, or to add more), replaying its journal; it writes in the
 *  background (CK_WRITE_MODE_BACKGROUND, 256 MiB queue). Repairs what a crash
 *  leaves: a torn last journal line is cut off (a complete last line without its newline is kept
 *  and ended); frames whose files are missing are dropped; files of an add that never reached the
 *  journal (under images/ and depth/ with the library's frame names, for ids after the last
 *  journaled frame) and temporary files of interrupted writes are deleted, so adding continues.
 *  A frame id journaled twice (a retried add) keeps its later line. The MultiScan streams are cut
 *  after their last journaled frame and continued (see "Crash safety"); streams of a 0.1 journal
 *  (which has no stream checkpoints) are kept as they are, and ck_dataset_stream_frame refuses
 *  them (CK_E_STATE).
 *  @return CK_OK; CK_E_NOT_FOUND (no dataset there); CK_E_CORRUPT (the journal is damaged before
 *  its last line, a value is out of range, images/ or depth/ is a symbolic link, .capturekit.lock
 *  is not a regular file, or a journaled stream end is past its file or not a frame boundary:
 *  nothing is cut); CK_E_BUSY (the folder is
 *  open for writing by another handle, in this process or another: nothing is read or changed);
 *  CK_E_IO; CK_E_INVALID_ARGUMENT. On error *dataset_out is untouched and the folder unchanged. Since 0.1. */
CK_API ck_status ck_dataset_open(ck_dataset **dataset_out, const char *dir);

/** Opens a finished or crashed dataset to read it: the frames of its journal's complete lines, as
 *  they are (nothing is repaired, written or deleted; a torn last line is skipped). Every writing
 *  call on it (add, stream, box, pass, event, flush, finalize, cancel) is CK_E_STATE; read it with
 *  ck_dataset_frame_count, ck_dataset_frame and ck_dataset_frame_path; free it with
 *  ck_dataset_close. @return CK_OK; CK_E_NOT_FOUND (no dataset there); CK_E_CORRUPT (the journal is damaged
 *  before its last line, or a value is out of range); CK_E_IO; CK_E_INVALID_ARGUMENT. Since 0.2. */
CK_API ck_status ck_dataset_open_readonly(ck_dataset **dataset_out, const char *dir);

/** One frame of a dataset, in the order they were added (ck_dataset_frame). Since 0.2. */
typedef struct ck_dataset_frame_info {
    uint64_t id;                 /**< the frame id its add returned */
    uint32_t pass;               /**< its capture pass */
    int32_t has_depth;           /**< 1: a depth PNG (ck_dataset_frame_path with CK_FRAME_PATH_DEPTH) */
    double timestamp;            /**< seconds, the caller's clock */
    ck_mat4 pose;                /**< camera-to-world, OpenGL camera axes */
    ck_intrinsics intrinsics;    /**< of its image */
    float sharpness;             /**< < 0: none */
    int32_t owns_image;          /**< 1: the library wrote the image; 0: the caller did */
    int64_t stream_index;        /**< its frame in the MultiScan streams; -1: not streamed */
} ck_dataset_frame_info;                                           /* 128 bytes on 64-bit, frozen */

/** The frame at `index` (0 ... ck_dataset_frame_count - 1) of a dataset (open, or read-only).
 *  @return CK_OK; CK_E_NOT_FOUND (index past the last frame); CK_E_INVALID_ARGUMENT (NULL). Since 0.2. */
CK_API ck_status ck_dataset_frame(ck_dataset_frame_info *info_out, const ck_dataset *dataset, uint64_t index);

/** Which path ck_dataset_frame_path copies. Since 0.2. */
typedef enum ck_frame_path {
    CK_FRAME_PATH_IMAGE = 0,  /**< the image, relative to the dataset ("images/000012.png") */
    CK_FRAME_PATH_DEPTH = 1   /**< the 16-bit millimetre depth PNG ("depth/000012.png") */
} ck_frame_path;

/** Copies a frame's image or depth path (relative to the dataset, UTF-8, NUL-terminated) into dst;
 *  *written_out (optional) gets the bytes with the NUL, also on CK_E_BUFFER_TOO_SMALL.
 *  @return CK_OK; CK_E_BUFFER_TOO_SMALL; CK_E_NOT_FOUND (index past the last frame, or no depth);
 *  CK_E_INVALID_ARGUMENT (NULL, unknown `which`). Since 0.2. */
CK_API ck_status ck_dataset_frame_path(char *dst, size_t dst_capacity, size_t *written_out, const ck_dataset *dataset,
                                       uint64_t index, int32_t which);

/** Reads frame `index`'s depth into dst as `dst_format` (F32 or F16 metres, or MM), tightly packed:
 *  from its depth PNG when it has one, else from the MultiScan depth stream (its stream_index; the
 *  streams are described by the scan metadata that ck_dataset_finalize writes, so a dataset that
 *  was never finalised gives CK_E_NOT_FOUND for streamed-only frames). *width_out and *height_out
 *  (may be NULL) get the map's size and *written_out (may be NULL) the bytes, also on
 *  CK_E_BUFFER_TOO_SMALL (so a call with dst NULL and capacity 0 asks the size). dst is written only on CK_OK.
 *  @return CK_OK; CK_E_BUFFER_TOO_SMALL; CK_E_NOT_FOUND (index past the last frame, or no depth);
 *  CK_E_CORRUPT (the PNG or stream is damaged, the PNG declares a size larger than the frame's
 *  image and the dataset's depth_png size: refused before anything is allocated for it, or the
 *  PNG or a folder on its way is a symbolic link: never followed); CK_E_IO;
 *  CK_E_INVALID_ARGUMENT (NULL, not a depth format). Since 0.2. */
CK_API ck_status ck_dataset_frame_depth(void *dst, size_t dst_capacity, size_t *written_out, uint32_t *width_out,
                                        uint32_t *height_out, ck_dataset *dataset, uint64_t index, int32_t dst_format);

/** Reads frame `index`'s streamed confidence (0 low, 1 medium, 2 high; the stream's size) into dst;
 *  outputs as ck_dataset_frame_depth. @return CK_OK; CK_E_BUFFER_TOO_SMALL; CK_E_NOT_FOUND (index
 *  past the last frame, the frame was not streamed, no confidence stream, or the dataset was never
 *  finalised); CK_E_CORRUPT; CK_E_IO; CK_E_INVALID_ARGUMENT (NULL). Since 0.2. */
CK_API ck_status ck_dataset_frame_confidence(uint8_t *dst, size_t dst_capacity, size_t *written_out, uint32_t *width_out,
                                             uint32_t *height_out, ck_dataset *dataset, uint64_t index);

/** One captured frame. Start from CK_FRAME_DESC_INIT or ck_frame_desc_init(). */
typedef struct ck_frame_desc {
    uint32_t struct_size;
    uint32_t reserved;           /**< 0 */
    double timestamp;            /**< seconds, caller's clock, finite */
    ck_mat4 pose;                /**< camera-to-world, OpenGL camera axes, rigid */
    ck_intrinsics intrinsics;    /**< of the image */
    ck_image image;              /**< GRAY8, RGB8, RGBA8, BGRA8, NV12_FULL or NV12_VIDEO pixels of
                                      intrinsics.width x height: the library writes images/NNNNNN.png (or .jpg,
                                      image_encoding); data NULL: the caller writes the file */
    const char *image_path;      /**< image.data NULL: the file's path relative to the dataset (with extension);
                                      NULL = the name ck_dataset_next_image_path() gave for ".png" */
    ck_depth_map depth;          /**< optional depth (any depth format; 0 = unknown), written as a
                                      millimetre PNG; data NULL = none */
    float sharpness;             /**< optional (instant-ngp's key); < 0 = none */
    uint32_t reserved2;          /**< 0 */
    const void *image_chroma;    /**< NV12 images: the CbCr plane (else NULL) */
    size_t image_chroma_stride;  /**< its bytes per row; 0 = image.stride (or packed) */
} ck_frame_desc;

#define CK_FRAME_DESC_INIT { (uint32_t)sizeof(ck_frame_desc), 0u, 0.0, \
    { { 1.0f, 0.0f, 0.0f, 0.0f, 0.0f, 1.0f, 0.0f, 0.0f, 0.0f, 0.0f, 1.0f, 0.0f, 0.0f, 0.0f, 0.0f, 1.0f } }, \
    { 0.0f, 0.0f, 0.0f, 0.0f, 0u, 0u }, { NULL, 0u, 0u, 0, 0, 0u }, NULL, { NULL, 0u, 0u, 0, 0, 0u }, -1.0f, 0u, NULL, 0 }

/** Fills *desc_out with the defaults. Writes the first struct_size bytes only, struct_size included:
 *  pass sizeof(ck_frame_desc) (the ck_frame_desc_init() macro below does). @return CK_OK;
 *  CK_E_INVALID_ARGUMENT (NULL, struct_size below the first release's 184 bytes); CK_E_UNSUPPORTED
 *  (struct_size above this library's size: a header newer than the library). Since 0.2. */
CK_API ck_status ck_frame_desc_init_sized(ck_frame_desc *desc_out, size_t struct_size);
/** ck_frame_desc_init_sized() for a caller that cannot pass its size (a binary built before 0.2's sized
 *  calls, an FFI calling this symbol): writes the first release's layout only (184 bytes on 64-bit,
 *  struct_size 184), never more, so an older, smaller layout is not overrun; fields added since keep
 *  their defaults when the library reads the struct. In C and C++ the macro below maps
 *  ck_frame_desc_init() to ck_frame_desc_init_sized(). @return CK_OK; CK_E_INVALID_ARGUMENT (NULL).
 *  Since 0.1. */
CK_API ck_status ck_frame_desc_init(ck_frame_desc *desc_out);
#define ck_frame_desc_init(desc_out) ck_frame_desc_init_sized((desc_out), sizeof(ck_frame_desc))

/** The relative path the next added frame's image gets ("images/000012" + extension, e.g. ".png",
 *  ".jpg"), NUL-terminated into dst. *written_out (may be NULL) = its bytes with the NUL, on CK_OK
 *  and on CK_E_BUFFER_TOO_SMALL (nothing written). @return CK_OK; CK_E_BUFFER_TOO_SMALL;
 *  CK_E_INVALID_ARGUMENT (extension not ".xxx" of letters/digits). Since 0.1. */
CK_API ck_status ck_dataset_next_image_path(char *dst, size_t dst_capacity, size_t *written_out,
                                            const ck_dataset *dataset, const char *extension);

/** Adds a captured frame to the current pass; *frame_id_out (may be NULL) gets its id. A frame
 *  with the timestamp of the last frame given to ck_dataset_stream_frame is that streamed frame:
 *  transforms.json records its index in the MultiScan streams as "multiscan_frame" (the session
 *  does this for every capture). The descriptor's buffers are read during the call only. On error nothing of the frame stays on disk
 *  (its files are removed and its journal line cut back); if the journal cannot be cut back, later
 *  writes fail with CK_E_IO until the dataset is reopened. *frame_id_out is untouched on error.
 *  @return CK_OK; CK_E_STATE (opened read-only; the last frame id 2^40-1 is used);
 *  CK_E_EXISTS (the image file exists already and the library was to write it); CK_E_NOT_FOUND (no image data and
 *  the caller's file is missing); CK_E_IO (sticky once a write failed: see "A failed write is sticky"); CK_E_INVALID_ARGUMENT (incl. a path escaping the
 *  folder, a stride whose image span overflows). Since 0.1. */
CK_API ck_status ck_dataset_add_frame(uint64_t *frame_id_out, ck_dataset *dataset, const ck_frame_desc *desc);

/** Waits until every queued frame is written and journaled: when it returns CK_OK, every frame
 *  added before the call survives a crash. Reports a background write failure (CK_E_IO: the
 *  message names it and how many queued frames were discarded), and again on every later call
 *  (sticky); a dataset folder deleted while open is CK_E_IO too. Without a background writer it
 *  only journals the streams. @return CK_OK; CK_E_IO (sticky once a write failed: see "A failed write is sticky"); CK_E_STATE (opened read-only); CK_E_INVALID_ARGUMENT (NULL). Since 0.2. */
CK_API ck_status ck_dataset_flush(ck_dataset *dataset);

/** Removes a frame (its files inside the dataset are deleted; queued frames are written first). @return CK_OK; CK_E_NOT_FOUND;
 *  CK_E_IO (sticky once a write failed: see "A failed write is sticky"); CK_E_STATE (opened read-only); CK_E_INVALID_ARGUMENT. Since 0.1. */
CK_API ck_status ck_dataset_remove_frame(ck_dataset *dataset, uint64_t frame_id);

/** Number of frames currently in the dataset: every frame added (queued ones included, a
 *  background write failure takes back the frames it discarded) minus removed ones. @return CK_OK; CK_E_INVALID_ARGUMENT (NULL). Since 0.1. */
CK_API ck_status ck_dataset_frame_count(uint64_t *count_out, const ck_dataset *dataset);

/** Sets the box of the current pass (written to boundingbox.json at once). @return CK_OK; CK_E_IO (sticky once a write failed: see "A failed write is sticky"); CK_E_STATE (opened read-only); CK_E_INVALID_ARGUMENT (NULL, invalid box). Since 0.1. */
CK_API ck_status ck_dataset_set_box(ck_dataset *dataset, const ck_box *box);

/** Starts a new capture pass (the object flipped over, a second height) with its own box;
 *  *pass_out (may be NULL) gets its number (the first pass is 0). Later frames are tagged with it.
 *  @return CK_OK; CK_E_STATE (closed or cancelled, or the last pass 2^20-1 is used);
 *  CK_E_IO (sticky once a write failed: see "A failed write is sticky"); CK_E_INVALID_ARGUMENT. Since 0.1. */
CK_API ck_status ck_dataset_begin_pass(uint32_t *pass_out, ck_dataset *dataset, const ck_box *box);

/** Appends one frame to the MultiScan streams (depth in any depth format and confidence in U8,
 *  either may be NULL but not both, the same size when both are given; the first call fixes their
 *  sizes) and a camera-info line. `intrinsics` are the COLOUR camera's, at the colour image's
 *  resolution (as the MultiScan app records them: its scripts normalise them by the colour width),
 *  not the depth map's. At finalize the scan metadata lists the colour stream first (resolution and
 *  intrinsics of the first streamed frame, one frame per streamed frame), then depth, confidence
 *  and camera info, with the frame rate measured from the timestamps (0 if fewer than 2 frames)
 *  and number_of_files counting exactly the scan's files (the host's video only when
 *  ck_dataset_options.color_encoding names one). A reopened dataset continues its streams (0.1:
 *  CK_E_STATE), unless they were written by 0.1. The dataset's start_time_unix must be set (not 0):
 *  it is the scan id, MultiScan's server refuses a second scan with the same id, and the library
 *  never reads a clock (CK_E_INVALID_ARGUMENT naming start_time_unix; since 0.2).
 *  @return CK_OK; CK_E_IO (sticky once a write failed: see "A failed write is sticky"); CK_E_STATE (finalised, read-only, or 0.1 streams); CK_E_INVALID_ARGUMENT. Since 0.1. */
CK_API ck_status ck_dataset_stream_frame(ck_dataset *dataset, double timestamp, const ck_mat4 *pose,
                                         const ck_intrinsics *intrinsics, const ck_depth_map *depth,
                                         const ck_depth_map *confidence);

/** Appends an event to events.jsonl. @return CK_OK; CK_E_IO (sticky once a write failed: see "A failed write is sticky"); CK_E_STATE (opened read-only); CK_E_INVALID_ARGUMENT. Since 0.1. */
CK_API ck_status ck_dataset_log_event(ck_dataset *dataset, const ck_event *event);

/** Finalise flags. */
#define CK_FINALIZE_ZIP 1u       /**< also write <dir>.zip (or zip_path) of the whole dataset, verified */

/** Writes transforms.json, boundingbox.json and the scan metadata, ends the streams, and (with
 *  CK_FINALIZE_ZIP) packs the folder into zip_path (NULL = "<dir>.zip"; never overwrites). The
 *  dataset stays usable for queries; adding frames afterwards reopens the streams.
 *  @return CK_OK; CK_E_IO (sticky once a write failed: see "A failed write is sticky"); CK_E_EXISTS (the zip exists); CK_E_STATE (opened read-only); CK_E_INVALID_ARGUMENT. Since 0.1. */
CK_API ck_status ck_dataset_finalize(ck_dataset *dataset, uint32_t flags, const char *zip_path);

/** Deletes every file and folder this dataset created inside `dir`, and the images the caller wrote
 *  under the names it gave (images/...), nothing else and nothing outside `dir` (every path is
 *  checked again, and no symbolic link is followed); a folder still holding other files stays.
 *  Frees the dataset. A dataset borrowed from a session (ck_session_dataset) is refused and stays
 *  valid. @return CK_OK; CK_E_IO (some files remain; the dataset is freed anyway); CK_E_STATE
 *  (borrowed from a session; or opened read-only: nothing is deleted, and it is freed). NULL is accepted and does nothing (CK_OK), as for every _close and
 *  _free. Since 0.1; NULL accepted since 0.2 (0.1 refused it). */
CK_API ck_status ck_dataset_cancel(ck_dataset *dataset);

/** Flushes and frees the dataset (NULL accepted) without finalising, and releases its lock;
 *  ck_dataset_open resumes it. A failed dataset (see "A failed write is sticky") is closed
 *  without writing and the call returns that CK_E_IO.
 *  A dataset borrowed from a session (ck_session_dataset) is refused and stays valid.
 *  @return CK_OK; CK_E_IO (sticky once a write failed: see "A failed write is sticky"); CK_E_STATE (borrowed from a session). Since 0.1. */
CK_API ck_status ck_dataset_close(ck_dataset *dataset);

/** Reads the box of capture pass `pass` from a boundingbox.json file (ours, or the reference
 *  app's: without "size" it is derived from the corners, without "floor" there is none), exactly as
 *  written (bit-exact round trip). @return CK_OK; CK_E_NOT_FOUND (no file, or no such pass);
 *  CK_E_CORRUPT (malformed: the message names the key); CK_E_IO; CK_E_INVALID_ARGUMENT. Since 0.1. */
CK_API ck_status ck_box_read(ck_box *box_out, const char *path, uint32_t pass);

/** Exports a finished dataset's poses and intrinsics (its transforms.json) as a COLMAP text model:
 *  out_dir/cameras.txt (one camera per distinct intrinsics: PINHOLE, or OPENCV with the dataset's
 *  distortion), images.txt (transforms.json's frames in order, ids from 1: the world-to-camera
 *  rotation as a unit quaternion QW QX QY QZ with QW >= 0 and translation, in COLMAP's OpenCV camera
 *  axes; NAME = the image path relative to the dataset, so COLMAP's image path is the dataset
 *  folder) and points3D.txt: the dataset's initial point cloud when transforms.json names one in
 *  "ply_file_path" (sparse_pc.ply: the measured surface coloured by the captures, see
 *  ck_dataset_set_surface), one line "POINT3D_ID X Y Z R G B ERROR" per point (ids from 1, world
 *  coordinates, ERROR 0, an empty track: the points come from depth, not triangulation), else
 *  its header only. out_dir is created if missing (its parent must exist); existing files are
 *  never replaced. UTF-8 paths.
 *  @return CK_OK; CK_E_NOT_FOUND (no transforms.json: finish or finalise the dataset first; or no
 *  parent folder; or the point cloud it names is missing); CK_E_CORRUPT (a damaged transforms.json
 *  or point cloud, or a ply_file_path that leaves the dataset); CK_E_UNSUPPORTED (a point cloud
 *  that is not a binary little-endian or ASCII PLY of scalar vertex properties); CK_E_EXISTS (a
 *  model file exists); CK_E_IO; CK_E_INVALID_ARGUMENT (NULL). Nothing is written on an error
 *  about the point cloud. Since 0.2. */
CK_API ck_status ck_dataset_export_colmap(const char *dataset_dir, const char *out_dir);

/* ============================================================================================
 * Session: one call per frame
 * ============================================================================================ */

typedef struct ck_session ck_session;

/** Log levels of the host's log callback. */
typedef enum ck_log_level {
    CK_LOG_LEVEL_DEBUG = 0,
    CK_LOG_LEVEL_INFO = 1,
    CK_LOG_LEVEL_WARNING = 2,
    CK_LOG_LEVEL_ERROR = 3
} ck_log_level;

/** A log callback: called on the thread that called into the session, with a message valid only
 *  during the call. It must not call back into the same session. */
typedef void (*ck_log_fn)(void *user, int32_t level, const char *message);

/** Session options. Start from CK_SESSION_OPTIONS_INIT or ck_session_options_init(). The nested
 *  option sets are held by pointer (NULL = defaults), so each can grow on its own; they are read
 *  during ck_session_create only. Since 0.2 (0.1 embedded them by value: a 0.1 binary's struct is
 *  refused with CK_E_UNSUPPORTED). */
typedef struct ck_session_options {
    uint32_t struct_size;
    int32_t preset;                       /**< CK_PRESET_OBJECT_CAPTURE or CK_PRESET_ROOM_SCAN: the scheduler defaults when scheduler is NULL */
    const ck_scheduler_options *scheduler;/**< NULL = the preset's (ck_scheduler_options_preset); else used as given */
    const ck_coverage_options *coverage;  /**< NULL = CK_COVERAGE_OPTIONS_INIT's */
    const ck_dataset_options *dataset;    /**< NULL = CK_DATASET_OPTIONS_INIT's */
    float storage_warning_minutes;        /**< event CK_EVENT_STORAGE_LOW below this many minutes left (default 10) */
    int32_t stream_depth;                 /**< 1: stream every frame's depth/confidence to the MultiScan files (default 1) */
    ck_log_fn log;                        /**< NULL = no logging */
    void *log_user;
    int32_t log_level;                    /**< minimum ck_log_level passed to log (default CK_LOG_LEVEL_INFO) */
    uint32_t reserved;                    /**< 0 */
    /* Since 0.2. */
    int32_t queue_full;                   /**< a ck_queue_full: what a full write queue does to a capture or stream
                                               frame (background writer): CK_QUEUE_FULL_DROP (0, default) or
                                               CK_QUEUE_FULL_WAIT */
    uint32_t reserved2;                   /**< 0 */
} ck_session_options;

/** What a session does with a frame when the dataset's write queue is full. Since 0.2. */
typedef enum ck_queue_full {
    CK_QUEUE_FULL_DROP = 0,  /**< drop it with an event (CK_EVENT_CAPTURE_DROPPED, CK_EVENT_STREAM_FRAME_DROPPED):
                                  the caller's thread never waits for the disk */
    CK_QUEUE_FULL_WAIT = 1   /**< wait for room (nothing is dropped; the camera thread may stall) */
} ck_queue_full;

#define CK_SESSION_OPTIONS_INIT { (uint32_t)sizeof(ck_session_options), CK_PRESET_OBJECT_CAPTURE, NULL, NULL, NULL, \
    10.0f, 1, NULL, NULL, CK_LOG_LEVEL_INFO, 0u, CK_QUEUE_FULL_DROP, 0u }

/** Fills *options_out with the defaults for a preset (the nested option pointers NULL). Writes the
 *  first struct_size bytes only, struct_size included: pass sizeof(ck_session_options) (the
 *  ck_session_options_init() macro below does). @return CK_OK; CK_E_INVALID_ARGUMENT (NULL, unknown
 *  preset, struct_size below the first release's 64 bytes); CK_E_UNSUPPORTED (struct_size above this
 *  library's size: a header newer than the library). Since 0.2. */
CK_API ck_status ck_session_options_init_sized(ck_session_options *options_out, size_t struct_size, int32_t preset);
/** ck_session_options_init_sized() for a caller that cannot pass its size (a binary built before 0.2's
 *  sized calls, an FFI calling this symbol): writes the first release's layout only (64 bytes on
 *  64-bit, struct_size 64), never more, so an older, smaller layout is not overrun; fields added since
 *  keep their defaults when the library reads the struct. In C and C++ the macro below maps
 *  ck_session_options_init() to ck_session_options_init_sized(). @return CK_OK; CK_E_INVALID_ARGUMENT
 *  (NULL, unknown preset). Since 0.1. */
CK_API ck_status ck_session_options_init(ck_session_options *options_out, int32_t preset);
#define ck_session_options_init(options_out, preset) ck_session_options_init_sized((options_out), sizeof(ck_session_options), preset)

/** Called once when the library is done with an image handed over to it (see "Handing an image
 *  over"); `user` is the frame's image_release_user. Since 0.2. */
typedef void (*ck_image_release_fn)(void *user);

/** One camera frame for the session. Start from ck_session_frame_init().
 *
 *  Handing an image over (since 0.2): a rig that will not touch a frame's pixels again (ARKit's
 *  capturedImage held until released) sets image_release; a capture is then encoded from the
 *  caller's buffers on the writer's thread instead of being copied on the caller's (an 8 MB copy
 *  for a 1920 x 1440 RGB image). The library calls image_release(image_release_user) EXACTLY
 *  ONCE for every ck_session_process call given a frame whose struct_size covers the field and
 *  whose image_release is set, whatever the call returns (also with image.data NULL, a NULL
 *  session or result_out, and every error status):
 *  - before ck_session_process returns, on the caller's thread, when the frame is not captured,
 *    the capture is dropped (CK_EVENT_CAPTURE_DROPPED), the call fails, or the dataset writes
 *    synchronously (CK_WRITE_MODE_SYNC: after the image file is written);
 *  - otherwise (a capture queued for the background writer), on the writer's thread, right after
 *    the image (and its downscaled copies) is encoded and written, before the frame is journaled;
 *    if the write fails, on the writer's thread when it fails; a queued write discarded after an
 *    earlier failure, when it is discarded (the writer's thread, or the caller's if that happens
 *    before ck_session_process has returned); at the latest before ck_session_flush, ck_session_finish,
 *    ck_session_close or ck_dataset_cancel returns (they wait for the writer), never after.
 *  The callback must not call back into the library for this session, should return quickly (it
 *  holds up the writer) and must be safe to run on another thread than the caller's. The stream
 *  maps (depth, confidence) are always lent for the call only. A frame with a NULL `frame` or a
 *  struct_size before this field is never released (nothing was handed over). */
typedef struct ck_session_frame {
    uint32_t struct_size;
    int32_t tracking;             /**< ck_tracking */
    double timestamp;             /**< seconds, strictly increasing */
    ck_mat4 pose;                 /**< camera-to-world */
    ck_intrinsics intrinsics;     /**< of the image */
    ck_image image;               /**< optional image (GRAY8, RGB8, RGBA8, BGRA8, NV12_FULL, NV12_VIDEO; written as
                                       PNG or JPEG when captured, off this thread); data NULL = none (the caller
                                       writes the captured image). Sharpness is measured from GRAY8 and NV12's Y */
    ck_depth_map depth;           /**< optional depth (any depth format) */
    ck_depth_map confidence;      /**< optional confidence (U8, the depth map's size) */
    ck_intrinsics depth_intrinsics; /**< of the depth map; all zero = `intrinsics` scaled to the map's
                                       size (ck_intrinsics_scale; ARKit's depth is aligned with its image) */
    float sharpness;              /**< < 0: the library measures it (ck_sharpness_score) from a GRAY8 image or an
                                       NV12 image's Y plane, over the central 640 x 480 pixels (the whole image
                                       when smaller: at 1920 x 1440 the whole frame would cost ~2 ms a frame) */
    uint32_t reserved;            /**< 0 */
    /* Since 0.2 (read only when struct_size covers them). */
    int32_t tracking_reason;      /**< a ck_tracking_reason (read with CK_TRACKING_LIMITED); default NONE */
    float mean_luma;              /**< mean image luma 0..1 for the low-light gate; < 0 (default -1): the library
                                       measures it from the image when given (GRAY8, RGB8, RGBA8, BGRA8, NV12's Y:
                                       BT.601 luma of every 4th pixel of every 4th row; every 8th above 640 x 480, every
                                       16th above 1280 x 960) */
    const void *image_chroma;     /**< NV12 images: the CbCr plane (else NULL) */
    size_t image_chroma_stride;   /**< its bytes per row; 0 = image.stride (or packed) */
    /* Since 0.2, second layout (read only when struct_size covers them; NULL = lend the image). */
    ck_image_release_fn image_release; /**< NULL (default): the image is lent for the call only (a capture copies
                                       it). Set: the caller HANDS OVER image.data and image_chroma (a capture
                                       is encoded from them in place, no copy) and must not write to or free them
                                       until the library calls image_release(image_release_user), exactly once
                                       per ck_session_process call that read this field: see "Handing an image over" */
    void *image_release_user;     /**< passed to image_release */
} ck_session_frame;                                                /* 272 bytes on 64-bit (0.2's first layouts: 232, 256) */

/** Fills *frame_out with the defaults (tracking normal, identity pose, no buffers). Writes the first
 *  struct_size bytes only, struct_size included: pass sizeof(ck_session_frame) (the
 *  ck_session_frame_init() macro below does). @return CK_OK; CK_E_INVALID_ARGUMENT (NULL, struct_size
 *  below the first release's 232 bytes); CK_E_UNSUPPORTED (struct_size above this library's size: a
 *  header newer than the library). Since 0.2. */
CK_API ck_status ck_session_frame_init_sized(ck_session_frame *frame_out, size_t struct_size);
/** ck_session_frame_init_sized() for a caller that cannot pass its size (a binary built before 0.2's
 *  sized calls, an FFI calling this symbol): writes the first release's layout only (232 bytes on
 *  64-bit, struct_size 232), never more, so an older, smaller layout is not overrun; fields added since
 *  keep their defaults when the library reads the struct. In C and C++ the macro below maps
 *  ck_session_frame_init() to ck_session_frame_init_sized(). @return CK_OK; CK_E_INVALID_ARGUMENT
 *  (NULL). Since 0.1. */
CK_API ck_status ck_session_frame_init(ck_session_frame *frame_out);
#define ck_session_frame_init(frame_out) ck_session_frame_init_sized((frame_out), sizeof(ck_session_frame))

/** What the session did with a frame. */
typedef struct ck_session_result {
    int32_t captured;             /**< 1: the frame was captured (added to the dataset) */
    uint32_t pass;                /**< current capture pass */
    uint64_t frame_id;            /**< the captured frame's id; UINT64_MAX when captured without pixels (that frame
                                       is added once its image exists, at the next process, flush or finish call,
                                       which queues CK_EVENT_CAPTURE_COMMITTED with its id as the event's index) */
    ck_guidance guidance;         /**< the scheduler's answer */
    float coverage;               /**< overall coverage completion, 0..1 */
    float minutes_left;           /**< recording minutes left on the dataset's file system (inf: unknown yet) */
    uint32_t events;              /**< events queued by this frame */
    uint32_t reserved;            /**< 0 */
    char image_path[64];          /**< captured without pixels: the relative path the caller must write now */
} ck_session_result;

/** Creates a session writing a new dataset in `dir`. The box starts as the one given (NULL: none
 *  until ck_session_set_box). With stream_depth 1 (the default) the dataset options' start_time_unix
 *  must be set, as for ck_dataset_stream_frame: CK_E_INVALID_ARGUMENT naming it otherwise (since 0.2;
 *  so NULL options are refused: pass dataset options with the scan's start time, or stream_depth 0).
 *  @return as ck_dataset_create and ck_scheduler_create. Since 0.1. */
CK_API ck_status ck_session_create(ck_session **session_out, const char *dir, const ck_session_options *options,
                                   const ck_box *box);

/** Resumes the session of the dataset in `dir` after a crash (or after ck_session_close): reopens
 *  the dataset as ck_dataset_open does (journal replayed, the MultiScan streams cut after their
 *  last journaled frame and continued), takes the current pass and its box, rebuilds coverage from
 *  that pass's journaled captures (their poses and intrinsics, in order: the same counts, cells and
 *  completed sides as the uninterrupted session had for those frames; their events are not queued
 *  again) and the scheduler from those captures (the last capture time for the interval, the views
 *  for the redundancy gate, the capture count) and from the poses of the last streamed frames (the
 *  motion history for speed, turning and drift). So the next ck_session_process captures and gates
 *  as if the frames before the crash had come without a break; timestamps must go on after the
 *  last journaled one. Only the prompts' held time starts empty. What a crash loses: frames queued
 *  and not yet flushed, stream frames after the last checkpoint, and a captured image the caller
 *  had not written yet. The dataset keeps its journaled options (options->dataset gives only
 *  write_mode and write_queue_mb); the other options apply as in ck_session_create.
 *  @return CK_OK; CK_E_NOT_FOUND (no dataset there); CK_E_CORRUPT (as ck_dataset_open, or a
 *  journaled pose is not rigid); CK_E_BUSY (as ck_dataset_open); CK_E_UNSUPPORTED (stream_depth 1 but the dataset's streams were
 *  written by 0.1 and cannot be continued: resume with stream_depth 0; or options from a newer
 *  header); CK_E_IO; CK_E_INVALID_ARGUMENT. On error *session_out is untouched. Since 0.2. */
CK_API ck_status ck_session_resume(ck_session **session_out, const char *dir, const ck_session_options *options);

/** Sets or edits the box (coverage is re-bound, counts kept; the dataset's pass box updated). @return CK_OK; CK_E_STATE (finished); CK_E_IO (sticky once a write failed: see "A failed write is sticky"); CK_E_INVALID_ARGUMENT (NULL, invalid box). Since 0.1. */
CK_API ck_status ck_session_set_box(ck_session *session, const ck_box *box);

/** Starts a new capture pass with its own box, as when the object is turned over (Apple's Object
 *  Capture "flip"): a captured image the caller has written by now is committed to the current
 *  pass first, the dataset starts the next pass with `box` (as ck_dataset_begin_pass), coverage
 *  starts again for the new box (counts reset; a ck_session_coverage pointer stays valid) and the
 *  scheduler starts over. *pass_out (may be NULL) gets the new pass number.
 *  @return CK_OK; CK_E_STATE (finished, or the last pass 2^20-1 is used);
 *  CK_E_IO (sticky once a write failed: see "A failed write is sticky"); CK_E_INVALID_ARGUMENT (NULL, invalid box). Since 0.2. */
CK_API ck_status ck_session_begin_pass(uint32_t *pass_out, ck_session *session, const ck_box *box);

/** Processes one frame: guidance, capture decision, streams, dataset, coverage, storage, events.
 *  A capture and the stream frame are queued for the dataset's background writer (see "Writing
 *  off the caller's thread"): the call does not wait for the disk, and with CK_QUEUE_FULL_DROP a
 *  full queue drops the capture (captured 0, CK_EVENT_CAPTURE_DROPPED, coverage not counted) or
 *  the stream frame (CK_EVENT_STREAM_FRAME_DROPPED). Frames are durable after ck_session_flush.
 *  @return CK_OK with *result_out; CK_E_STATE (aborted after drift, or finished); CK_E_IO (a
 *  write failed, this frame's or a queued one's: nothing half-written; this frame is not captured; and
 *  every later call once a write failed, see "A failed write is sticky");
 *  CK_E_INVALID_ARGUMENT. Since 0.1. */
CK_API ck_status ck_session_process(ck_session_result *result_out, ck_session *session, const ck_session_frame *frame);

/** Commits a captured image the caller has written by now and waits until every queued frame is
 *  written and journaled (as ck_dataset_flush): when it returns CK_OK, every frame processed
 *  before survives a crash. @return CK_OK; CK_E_IO (sticky once a write failed: see "A failed write is sticky"); CK_E_STATE (finished); CK_E_INVALID_ARGUMENT (NULL). Since 0.2. */
CK_API ck_status ck_session_flush(ck_session *session);

/** Removes the oldest queued event (scheduler, coverage and storage events, in order). The queue
 *  holds the latest CK_EVENT_QUEUE_CAPACITY events (older ones are dropped, so a caller that never
 *  pops keeps memory flat); events.jsonl has them all.
 *  @return CK_OK; CK_END (queue empty); CK_E_INVALID_ARGUMENT. Since 0.1. */
CK_API ck_status ck_session_next_event(ck_event *event_out, ck_session *session);

/** The session's coverage (borrowed, valid until ck_session_close) for detailed queries; the
 *  session frees it (ck_coverage_free on it does nothing). @return CK_OK; CK_E_STATE (no box yet, so no coverage); CK_E_INVALID_ARGUMENT (NULL). Since 0.1. */
CK_API ck_status ck_session_coverage(const ck_coverage **coverage_out, const ck_session *session);

/** The session's dataset (borrowed, valid until ck_session_close): ck_dataset_close and
 *  ck_dataset_cancel refuse it with CK_E_STATE. @return CK_OK; CK_E_INVALID_ARGUMENT (NULL). Since 0.1. */
CK_API ck_status ck_session_dataset(ck_dataset **dataset_out, ck_session *session);

/** Finalises the dataset (flags as ck_dataset_finalize). @return CK_OK;
 *  CK_E_IO (sticky once a write failed: see "A failed write is sticky"); CK_E_EXISTS (the zip
 *  exists); CK_E_INVALID_ARGUMENT. Since 0.1. */
CK_API ck_status ck_session_finish(ck_session *session, uint32_t flags, const char *zip_path);

/** Flushes and frees the session; an unfinished dataset stays on disk, resumable with
 *  ck_dataset_open. The session is freed even on error. @return CK_OK (also for NULL); CK_E_IO (the
 *  dataset could not be flushed, or a write had failed: see "A failed write is sticky"). Since 0.2 (0.1: void ck_session_free). */
CK_API ck_status ck_session_close(ck_session *session);

#ifdef __cplusplus
}
#endif

#endif /* CAPTUREKIT_CK_DATASET_H */
