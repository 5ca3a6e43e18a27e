/* Guidance: the capture scheduler, quality gates, events, coverage and sharpness. Part of the CaptureKit C API; include <capturekit.h>, not this file. */
#ifndef CAPTUREKIT_CK_GUIDANCE_H
#define CAPTUREKIT_CK_GUIDANCE_H

#include "ck_raycast.h"
#include "ck_image.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ============================================================================================
 * Guidance: when to capture, what to tell the operator, how much of the object has been seen
 *
 * A rig calls ck_scheduler_update() once per camera frame with the time, the pose and the
 * tracking state; the answer says whether to capture the frame and which conditions hold.
 * Prompts for the operator ("slow down", "tilt up" ...) come as events from a queue the rig
 * polls with ck_scheduler_next_event() until it returns CK_END. For every captured frame the
 * rig calls ck_coverage_add_view(), then reads per-face progress, colours, cells, the
 * view-direction dial and a "go this way next" hint. Everything is deterministic: time comes
 * only from the caller (double seconds on any clock), the library never reads a clock.
 *
 * Handles (ck_scheduler, ck_coverage) are used by one thread at a time; distinct handles are
 * independent. ck_sharpness_score() and ck_event_string() are safe from any thread.
 * ============================================================================================ */

/** Tracking state as ARKit reports it (ARCamera.TrackingState). Functions take int32_t. */
typedef enum ck_tracking {
    CK_TRACKING_NOT_AVAILABLE = 0,
    CK_TRACKING_LIMITED = 1,
    CK_TRACKING_NORMAL = 2
} ck_tracking;

/** Why tracking is limited, as ARKit reports it (ARCamera.TrackingState.Reason): each reason is its
 *  own condition and prompt (CK_EVENT_TRACKING_INITIALIZING ...) alongside CK_GUIDE_TRACKING_LIMITED.
 *  Read only when tracking is CK_TRACKING_LIMITED. Functions take int32_t. Since 0.2. */
typedef enum ck_tracking_reason {
    CK_TRACKING_REASON_NONE = 0,                  /**< none given (or not limited) */
    CK_TRACKING_REASON_INITIALIZING = 1,          /**< the session is starting */
    CK_TRACKING_REASON_EXCESSIVE_MOTION = 2,      /**< the device moves too fast */
    CK_TRACKING_REASON_INSUFFICIENT_FEATURES = 3, /**< too little texture or light */
    CK_TRACKING_REASON_RELOCALIZING = 4           /**< resuming after an interruption */
} ck_tracking_reason;

/** Speed bands: the smoothed speed against the band edges speed_slow < speed_medium < speed_fast. */
typedef enum ck_speed_band {
    CK_SPEED_BAND_SLOW = 0,      /**< speed < speed_slow: capture every interval_slow; "speed up" */
    CK_SPEED_BAND_MEDIUM = 1,    /**< speed < speed_medium: every interval_medium */
    CK_SPEED_BAND_FAST = 2,      /**< speed < speed_fast: every interval_fast */
    CK_SPEED_BAND_TOO_FAST = 3   /**< speed >= speed_fast: no capture; "slow down" */
} ck_speed_band;

/** Option presets for ck_scheduler_options_preset(). */
typedef enum ck_preset {
    CK_PRESET_OBJECT_CAPTURE = 0, /**< orbiting an object: the defaults (CK_SCHEDULER_OPTIONS_INIT) */
    CK_PRESET_ROOM_SCAN = 1       /**< walking through a room (CubiCasa / MultiScan style) */
} ck_preset;

/** Event codes. Explicit values, never renumbered or reused. Codes 1..21 come from the
 *  scheduler and are also its guidance conditions (flag bit = 1u << (code - 1), CK_GUIDE_*);
 *  codes 101.. come from coverage (105.. from ck_surface), 201.. from the session. ck_event.value carries the number
 *  named after each code. */
typedef enum ck_event_code {
    CK_EVENT_SLOW_DOWN = 1,               /**< too fast (band CK_SPEED_BAND_TOO_FAST); value: speed, m/s */
    CK_EVENT_SPEED_UP = 2,                /**< band CK_SPEED_BAND_SLOW; value: speed, m/s */
    CK_EVENT_TURNING_TOO_FAST = 3,        /**< value: angular speed, rad/s */
    CK_EVENT_TILT_DOWN = 4,               /**< pitch above pitch_max_deg; value: pitch, rad */
    CK_EVENT_TILT_UP = 5,                 /**< pitch below pitch_min_deg; value: pitch, rad */
    CK_EVENT_DRIFT = 6,                   /**< position jump: the session is aborted; value: jump, m */
    CK_EVENT_POINT_AT_OBJECT = 7,         /**< box centre off the view axis; value: its angle, rad */
    CK_EVENT_TRACKING_LIMITED = 8,        /**< tracking CK_TRACKING_LIMITED */
    CK_EVENT_TRACKING_NOT_AVAILABLE = 9,  /**< tracking CK_TRACKING_NOT_AVAILABLE */
    CK_EVENT_TOO_CLOSE = 10,              /**< distance below depth_min; value: it, m. The distance is the median
                                               centre depth when the frame has valid depth there, else (since 0.2)
                                               the distance from the camera to the nearest point of the box (0 inside) */
    CK_EVENT_TOO_FAR = 11,                /**< that distance above depth_max; value: it, m */
    CK_EVENT_BLURRY = 12,                 /**< sharpness below min_sharpness; value: the score */
    CK_EVENT_WALKING_SIDEWAYS_LEFT = 13,  /**< value: sideways speed, m/s */
    CK_EVENT_WALKING_SIDEWAYS_RIGHT = 14, /**< value: sideways speed, m/s */
    CK_EVENT_MOVE_TO_NEW_VIEW = 15,       /**< a due capture was redundant; value: distance to the nearest captured view, m */
    CK_EVENT_OBJECT_OUT_OF_FRAME = 16,    /**< less than min_box_in_frame of the box's silhouette is in the image; value: the fraction in (since 0.2) */
    CK_EVENT_LOW_LIGHT = 17,              /**< mean_luma below min_luma; value: the mean luma, 0..1 (since 0.2) */
    CK_EVENT_TRACKING_INITIALIZING = 18,  /**< tracking limited, CK_TRACKING_REASON_INITIALIZING (since 0.2) */
    CK_EVENT_TRACKING_EXCESSIVE_MOTION = 19, /**< tracking limited, CK_TRACKING_REASON_EXCESSIVE_MOTION (since 0.2) */
    CK_EVENT_TRACKING_INSUFFICIENT_FEATURES = 20, /**< tracking limited, CK_TRACKING_REASON_INSUFFICIENT_FEATURES (since 0.2) */
    CK_EVENT_TRACKING_RELOCALIZING = 21,  /**< tracking limited, CK_TRACKING_REASON_RELOCALIZING (since 0.2) */
    CK_EVENT_SIDE_COMPLETED = 101,        /**< a face reached its goal (once); index: the face; value: its count */
    CK_EVENT_ALL_SIDES_COMPLETED = 102,   /**< every face of face_mask reached its goal (once); value: views */
    CK_EVENT_RING_COMPLETED = 103,        /**< every azimuth bin of an elevation ring has a view (once); index: the ring */
    CK_EVENT_INSIDE_BOX = 104,            /**< a view from inside the box was not counted (once per spell inside; since 0.2) */
    CK_EVENT_SURFACE_SIDE_COMPLETED = 105, /**< (ck_surface) a side's surface reached goal_fraction well covered (once);
                                               index: the side (a ck_face); value: its complete_fraction (since 0.2) */
    CK_EVENT_SURFACE_COMPLETED = 106,     /**< (ck_surface) the surface of the side_mask sides reached goal_fraction (once);
                                               value: views (since 0.2) */
    CK_EVENT_STORAGE_LOW = 201,           /**< (session) recording minutes left fell below the warning threshold; value: minutes */
    CK_EVENT_CAPTURE_DROPPED = 202,       /**< (session) a capture was dropped: the write queue was full; value: MiB queued (since 0.2) */
    CK_EVENT_STREAM_FRAME_DROPPED = 203,  /**< (session) a stream frame was dropped: the write queue was full; value: MiB queued (since 0.2) */
    CK_EVENT_CAPTURE_COMMITTED = 204      /**< (session) a capture whose image the caller wrote was added (at the next
                                               process, flush or finish call): index = its frame id, timestamp = the
                                               captured frame's (since 0.2) */
} ck_event_code;

/** Guidance flags (ck_guidance.flags, ck_scheduler_options.blocking_flags): the conditions that
 *  hold in a frame, bit (code - 1) of the matching event code. */
#define CK_GUIDE_SLOW_DOWN               (1u << 0)
#define CK_GUIDE_SPEED_UP                (1u << 1)
#define CK_GUIDE_TURNING_TOO_FAST        (1u << 2)
#define CK_GUIDE_TILT_DOWN               (1u << 3)
#define CK_GUIDE_TILT_UP                 (1u << 4)
#define CK_GUIDE_DRIFT                   (1u << 5)
#define CK_GUIDE_POINT_AT_OBJECT         (1u << 6)
#define CK_GUIDE_TRACKING_LIMITED        (1u << 7)
#define CK_GUIDE_TRACKING_NOT_AVAILABLE  (1u << 8)
#define CK_GUIDE_TOO_CLOSE               (1u << 9)
#define CK_GUIDE_TOO_FAR                 (1u << 10)
#define CK_GUIDE_BLURRY                  (1u << 11)
#define CK_GUIDE_WALKING_SIDEWAYS_LEFT   (1u << 12)
#define CK_GUIDE_WALKING_SIDEWAYS_RIGHT  (1u << 13)
#define CK_GUIDE_MOVE_TO_NEW_VIEW        (1u << 14)
#define CK_GUIDE_OBJECT_OUT_OF_FRAME     (1u << 15)  /**< since 0.2 */
#define CK_GUIDE_LOW_LIGHT               (1u << 16)  /**< since 0.2 */
#define CK_GUIDE_TRACKING_INITIALIZING   (1u << 17)  /**< since 0.2 */
#define CK_GUIDE_TRACKING_EXCESSIVE_MOTION (1u << 18)  /**< since 0.2 */
#define CK_GUIDE_TRACKING_INSUFFICIENT_FEATURES (1u << 19)  /**< since 0.2 */
#define CK_GUIDE_TRACKING_RELOCALIZING   (1u << 20)  /**< since 0.2 */
/** Every defined flag (0.1: 0x7FFF). */
#define CK_GUIDE_ALL                     0x1FFFFFu
/** The default blocking_flags of the object-capture preset: every condition except speed up,
 *  walking sideways, move to a new view (which never blocks: it is the outcome of a block) and
 *  low light (advice only: a dark object is legitimately dim, and waiting does not add light;
 *  add CK_GUIDE_LOW_LIGHT to block on it). The object partly out of frame and the four
 *  limited-tracking reasons block, the box gates (point at the object, out of frame, too close
 *  from the box) with the advice rule of ck_scheduler_update (0.1: 0x0FFD). */
#define CK_GUIDE_BLOCKING_OBJECT_CAPTURE 0x1E8FFDu
/** The room-scan preset's: the same without tilt up / tilt down (looking at the floor or the
 *  ceiling is prompted after pitch_delay but not blocked); its box gates (point at the object,
 *  out of frame) are off by their options (0.1: 0x0FE5). */
#define CK_GUIDE_BLOCKING_ROOM_SCAN      0x1E8FE5u

/** Largest number of events a queue holds; when full, the oldest event is dropped. */
#define CK_EVENT_QUEUE_CAPACITY 256u

/** One event. text is static English owned by the library, valid forever (the same pointer as
 *  ck_event_string(code)). */
typedef struct ck_event {
    int32_t code;       /**< a ck_event_code */
    int32_t index;      /**< the face (SIDE_COMPLETED) or ring (RING_COMPLETED); -1 otherwise */
    double timestamp;   /**< time of the frame or view that raised it, caller's clock, seconds */
    float value;        /**< the number named at the code; 0 if none */
    uint32_t reserved;  /**< 0 */
    const char *text;
} ck_event;                                                        /* 32 bytes on 64-bit, frozen */

/** Static English text of an event code ("Slow down"); never NULL; "unknown event" for codes not
 *  listed in ck_event_code. Queued events carry a text that may say more (ck_event.text of
 *  CK_EVENT_SIDE_COMPLETED names the side: "Front side completed"). Thread-safe. Since 0.1. */
CK_API const char *ck_event_string(int32_t code);

/** The name of one CK_GUIDE_* flag without its prefix ("SLOW_DOWN" for CK_GUIDE_SLOW_DOWN), for
 *  logs and UIs listing the conditions of ck_guidance.flags bit by bit; "unknown" unless `flag`
 *  is exactly one defined bit. Static text, never NULL. Thread-safe. Since 0.2. */
CK_API const char *ck_guide_flag_name(uint32_t flag);

/* --------------------------------------------------------------------------------------------
 * Scheduler
 * -------------------------------------------------------------------------------------------- */

/** An opaque scheduler: paces capture by the camera's motion and runs the quality gates. */
typedef struct ck_scheduler ck_scheduler;

/** Scheduler options. Start from CK_SCHEDULER_OPTIONS_INIT, ck_scheduler_options_init() or
 *  ck_scheduler_options_preset(). Units: seconds, metres, m/s; angles in degrees only where the
 *  name ends in _deg. "0 = off" disables that gate. Every field is range-checked when the
 *  scheduler is created. The defaults reproduce the reference object-capture app in true units:
 *  bands 0.254 / 0.406 / 0.508 m/s (10 / 16 / 20 inches per second) with intervals 3 / 2 / 1 s,
 *  first capture after 3 s, and above the top band no capture (the reference kept the last
 *  interval there). */
typedef struct ck_scheduler_options {
    uint32_t struct_size;        /**< sizeof(ck_scheduler_options) of the caller's header */
    float smoothing_window;      /**< speed and angular speed are measured over this window, s, (0, 10]; default 0.5.
                                      The window always reaches back to the previous frame: when it holds only the
                                      current frame (frames further apart than the window, e.g. captures 1-3 s apart)
                                      the speed is the displacement since the previous frame over the time between
                                      them, and the angular speed the rotation between them over that time */
    float speed_slow;            /**< upper edge of CK_SPEED_BAND_SLOW, m/s; default 0.254 */
    float speed_medium;          /**< upper edge of CK_SPEED_BAND_MEDIUM, m/s; default 0.406 */
    float speed_fast;            /**< upper edge of CK_SPEED_BAND_FAST, m/s (above: too fast); default 0.508; 0 < slow < medium < fast <= 100 */
    float interval_slow;         /**< capture interval in CK_SPEED_BAND_SLOW, s, (0, 3600]; default 3 */
    float interval_medium;       /**< in CK_SPEED_BAND_MEDIUM; default 2 */
    float interval_fast;         /**< in CK_SPEED_BAND_FAST; default 1 */
    float first_capture_delay;   /**< from the first frame to the first capture, s, [0, 3600]; default 3 */
    float max_angular_speed_deg; /**< faster turning is "turning too fast", deg/s, [0, 36000], 0 = off; default 45 */
    float pitch_max_deg;         /**< view pitch above this: "tilt down", degrees, [-90, 90]; default 30 */
    float pitch_min_deg;         /**< view pitch below this: "tilt up", degrees, < pitch_max_deg; default -65 */
    float pitch_delay;           /**< how long the pitch stays out of limits before its prompt, s; default 0.5 */
    float drift_distance;        /**< a move of more than this within drift_time is drift, m, 0 = off; default 10 */
    float drift_time;            /**< s, (0, 3600]; default 2 */
    float box_view_angle_deg;    /**< the box centre further than this from the view axis (or behind): "point at the object", [0, 180], 0 = off; default 25 */
    float redundant_distance;    /**< a due capture closer than redundant_distance (m) AND ... */
    float redundant_angle_deg;   /**< ... redundant_angle_deg (view directions) to a captured view is skipped; either 0 = off; defaults 0.10 m, 10 deg */
    float min_sharpness;         /**< a ck_scheduler_frame.sharpness below this is "blurry", >= 0, 0 = off; default 0 */
    float depth_min;             /**< distance below this: "too close", m, 0 = off; default 0.2. The distance is the
                                      median centre depth when the frame has valid depth there, else the
                                      distance from the camera to the nearest point of the frame's box (0 inside
                                      it; since 0.2); neither: not measured. Measured from the box (a loose bound on
                                      the object) it is advice unless the camera is inside the box */
    float depth_max;             /**< above this: "too far", m, 0 = off, > depth_min when both set; default 3 */
    float depth_center_fraction; /**< side of the centre window for the median, fraction of the image, (0, 1]; default 0.2 */
    float prompt_delay;          /**< a prompt fires once its condition held this long in total within the last
                                      prompt_window s, [0, 3600]; default 0.3 (40 % of 0.75 s: real
                                      hand-held motion crosses a limit in spells of 0.1-0.4 s) */
    float prompt_repeat;         /**< then it fires again at most every this many s while active, (0, 3600]; default 2.
                                      The limit counts from the prompt's last firing across separate spells: a
                                      condition that ends and holds again within prompt_repeat s of its last prompt
                                      is not prompted again until prompt_repeat s have passed (no repeat on flicker) */
    float sideways_ratio;        /**< walking sideways: sideways share of the horizontal velocity above this, [0, 1], 0 = off; default 0 */
    float sideways_min_speed;    /**< ... at a horizontal speed of at least this, m/s; default 0.2 */
    uint32_t blocking_flags;     /**< CK_GUIDE_* conditions that prevent a capture while they hold (too fast and drift always do); default CK_GUIDE_BLOCKING_OBJECT_CAPTURE */
    /* Since 0.2. */
    float prompt_window;         /**< the window prompt_delay (and pitch_delay) is counted in, s, (0, 60]; at least
                                      the delay is used; default 0.75 */
    float min_box_in_frame;      /**< less than this fraction of the box's silhouette (the convex hull of its projected
                                      corners, the part behind the camera clipped away) inside the image: "the object
                                      is partly out of frame"; needs the frame's box and intrinsics; [0, 1], 0 = off;
                                      default 0.9 (room-scan preset: 0). It blocks only when the object is mostly
                                      outside the image (less than half of the silhouette in it, and that part
                                      covering less than half of the image); a partial view of a large object is
                                      advice (see ck_scheduler_update) */
    float min_luma;              /**< a frame's mean_luma below this: "more light needed", [0, 1], 0 = off; default 0.15 */
} ck_scheduler_options;                                            /* 120 bytes (0.1: 108) */

#define CK_SCHEDULER_OPTIONS_INIT { (uint32_t)sizeof(ck_scheduler_options), 0.5f, 0.254f, 0.406f, 0.508f, \
    3.0f, 2.0f, 1.0f, 3.0f, 45.0f, 30.0f, -65.0f, 0.5f, 10.0f, 2.0f, 25.0f, 0.10f, 10.0f, 0.0f, 0.2f, 3.0f, \
    0.2f, 0.3f, 2.0f, 0.0f, 0.2f, CK_GUIDE_BLOCKING_OBJECT_CAPTURE, 0.75f, 0.9f, 0.15f }

/** Fills *options_out with the defaults (the object-capture preset; same as CK_SCHEDULER_OPTIONS_INIT).
 *  Writes the first struct_size bytes only, struct_size included: pass sizeof(ck_scheduler_options)
 *  (the ck_scheduler_options_init() macro below does). @return CK_OK; CK_E_INVALID_ARGUMENT (NULL,
 *  struct_size below the first release's 108 bytes); CK_E_UNSUPPORTED (struct_size above this library's
 *  size: a header newer than the library). Since 0.2. */
CK_API ck_status ck_scheduler_options_init_sized(ck_scheduler_options *options_out, size_t struct_size);
/** ck_scheduler_options_init_sized() for a caller that cannot pass its size (a binary built before
 *  0.2's sized calls, an FFI calling this symbol): writes the first release's layout only (108 bytes on
 *  64-bit, struct_size 108), never more, so an older, smaller layout is not overrun; fields added since
 *  keep their defaults when the library reads the struct. In C and C++ the macro below maps
 *  ck_scheduler_options_init() to ck_scheduler_options_init_sized(). @return CK_OK;
 *  CK_E_INVALID_ARGUMENT (NULL). Since 0.1. */
CK_API ck_status ck_scheduler_options_init(ck_scheduler_options *options_out);
#define ck_scheduler_options_init(options_out) ck_scheduler_options_init_sized((options_out), sizeof(ck_scheduler_options))

/** Fills *options_out with a preset. CK_PRESET_ROOM_SCAN: bands 0.2 / 0.5 / 0.8 m/s, intervals 1 / 0.5
 *  / 0.25 s, first capture after 1 s, turning limit 60 deg/s, pitch limits +-45 deg for 3 s (prompted,
 *  not blocking), no box gate, redundancy 0.2 m / 15 deg, depth 0.4..5 m, walking sideways at a
 *  sideways share above 0.7 from 0.2 m/s. Writes the first struct_size bytes only, struct_size
 *  included: pass sizeof(ck_scheduler_options) (the ck_scheduler_options_preset() macro below does). On
 *  an error *options_out is unchanged. @return CK_OK; CK_E_INVALID_ARGUMENT (NULL, unknown preset,
 *  struct_size below the first release's 108 bytes); CK_E_UNSUPPORTED (struct_size above this library's
 *  size: a header newer than the library). Since 0.2. */
CK_API ck_status ck_scheduler_options_preset_sized(ck_scheduler_options *options_out, size_t struct_size, int32_t preset);
/** ck_scheduler_options_preset_sized() for a caller that cannot pass its size (a binary built before
 *  0.2's sized calls, an FFI calling this symbol): writes the first release's layout only (108 bytes on
 *  64-bit, struct_size 108), never more, so an older, smaller layout is not overrun; fields added since
 *  keep their defaults when the library reads the struct. In C and C++ the macro below maps
 *  ck_scheduler_options_preset() to ck_scheduler_options_preset_sized(). @return CK_OK;
 *  CK_E_INVALID_ARGUMENT (NULL, unknown preset). Since 0.1. */
CK_API ck_status ck_scheduler_options_preset(ck_scheduler_options *options_out, int32_t preset);
#define ck_scheduler_options_preset(options_out, preset) ck_scheduler_options_preset_sized((options_out), sizeof(ck_scheduler_options), preset)

/** Creates a scheduler. options may be NULL (the defaults). On success *out owns a new scheduler
 *  the caller releases with ck_scheduler_free(); on failure *out is set to NULL.
 *  @return CK_OK; CK_E_INVALID_ARGUMENT (out NULL, a field out of range: the message names it);
 *  CK_E_UNSUPPORTED (struct_size larger than this library knows with non-zero extra bytes).
 *  Since 0.1. */
CK_API ck_status ck_scheduler_create(ck_scheduler **out, const ck_scheduler_options *options);

/** Releases a scheduler and its queued events. NULL is accepted. Since 0.1. */
CK_API void ck_scheduler_free(ck_scheduler *scheduler);

/** One frame for ck_scheduler_update(). Start from CK_SCHEDULER_FRAME_INIT or
 *  ck_scheduler_frame_init(). The pointers are borrowed for the duration of the call. */
typedef struct ck_scheduler_frame {
    uint32_t struct_size;        /**< sizeof(ck_scheduler_frame) of the caller's header */
    int32_t tracking;            /**< a ck_tracking; default CK_TRACKING_NORMAL */
    double timestamp;            /**< seconds, caller's clock; finite, |t| <= 1e12, strictly increasing */
    ck_mat4 pose;                /**< camera-to-world, a rigid transform; default identity */
    const ck_box *box;           /**< the box around the object, or NULL (no "point at the object" or "out of frame"
                                      gate, and without depth no distance) */
    float sharpness;             /**< the caller's score (e.g. ck_sharpness_score), finite; < 0 = not measured (default -1) */
    uint32_t reserved;           /**< 0 */
    ck_depth_map depth;          /**< optional depth map (any depth format); data NULL = none. Values
                                      that are not finite and > 0 (0 = no depth) are ignored. */
    ck_intrinsics depth_intrinsics; /**< of the depth map; all zero = the centre of the map (the
                                      window is centred on the principal point); else its width and
                                      height must equal the map's */
    /* Since 0.2 (read only when struct_size covers them). */
    ck_intrinsics intrinsics;    /**< of the camera image; all zero (default) = unknown: no "out of frame" gate */
    int32_t tracking_reason;     /**< a ck_tracking_reason, read when tracking is CK_TRACKING_LIMITED; default NONE */
    float mean_luma;             /**< mean image luma, 0..1 (e.g. BT.601 luma / 255; a host with only an exposure or
                                      light estimate maps it to this scale); < 0 = not measured (default -1) */
} ck_scheduler_frame;                                              /* 184 bytes on 64-bit (0.2's first layout: 152) */

#define CK_SCHEDULER_FRAME_INIT { (uint32_t)sizeof(ck_scheduler_frame), CK_TRACKING_NORMAL, 0.0, \
    { { 1.0f, 0.0f, 0.0f, 0.0f, 0.0f, 1.0f, 0.0f, 0.0f, 0.0f, 0.0f, 1.0f, 0.0f, 0.0f, 0.0f, 0.0f, 1.0f } }, \
    NULL, -1.0f, 0u, { NULL, 0u, 0u, 0, 0, 0u }, { 0.0f, 0.0f, 0.0f, 0.0f, 0u, 0u }, \
    { 0.0f, 0.0f, 0.0f, 0.0f, 0u, 0u }, CK_TRACKING_REASON_NONE, -1.0f }

/** Fills *frame_out with the defaults (same as CK_SCHEDULER_FRAME_INIT). Writes the first struct_size
 *  bytes only, struct_size included: pass sizeof(ck_scheduler_frame) (the ck_scheduler_frame_init()
 *  macro below does). @return CK_OK; CK_E_INVALID_ARGUMENT (NULL, struct_size below the first release's
 *  152 bytes); CK_E_UNSUPPORTED (struct_size above this library's size: a header newer than the
 *  library). Since 0.2. */
CK_API ck_status ck_scheduler_frame_init_sized(ck_scheduler_frame *frame_out, size_t struct_size);
/** ck_scheduler_frame_init_sized() for a caller that cannot pass its size (a binary built before 0.2's
 *  sized calls, an FFI calling this symbol): writes the first release's layout only (152 bytes on
 *  64-bit, struct_size 152), never more, so an older, smaller layout is not overrun; fields added since
 *  keep their defaults when the library reads the struct. In C and C++ the macro below maps
 *  ck_scheduler_frame_init() to ck_scheduler_frame_init_sized(). @return CK_OK; CK_E_INVALID_ARGUMENT
 *  (NULL). Since 0.1. */
CK_API ck_status ck_scheduler_frame_init(ck_scheduler_frame *frame_out);
#define ck_scheduler_frame_init(frame_out) ck_scheduler_frame_init_sized((frame_out), sizeof(ck_scheduler_frame))

/** The scheduler's answer for one frame. */
typedef struct ck_guidance {
    int32_t capture;         /**< 1: capture this frame (it is counted as captured), else 0 */
    int32_t band;            /**< a ck_speed_band */
    uint32_t flags;          /**< CK_GUIDE_* conditions that hold in this frame */
    uint32_t captures;       /**< captures so far, this one included */
    float speed;             /**< smoothed speed, m/s: least-squares velocity over smoothing_window */
    float angular_speed;     /**< rad/s: rotation from the window's oldest orientation to this one over their time span */
    float pitch;             /**< elevation of the view direction, rad, positive looking up */
    float interval;          /**< the current band's capture interval, s; 0 when too fast */
    float next_capture_in;   /**< s until the interval has elapsed; 0 when a capture is due (or too fast) */
    float median_depth;      /**< median valid depth of the centre window, m; 0 when not measured (the box
                                  distance used without depth is not reported here: see CK_EVENT_TOO_CLOSE) */
    uint32_t blocked;        /**< the CK_GUIDE_* conditions of flags that prevent a capture in this frame, whether or
                                  not one was due: flags & blocking_flags less the box gates' advice cases (see
                                  ck_scheduler_update), plus too fast and drift; 0 = nothing blocks (since 0.2;
                                  0.1: reserved) */
    uint32_t reserved;       /**< 0 */
} ck_guidance;                                                     /* 48 bytes, frozen */

/** Processes one frame: measures the motion, evaluates the gates, decides whether to capture and
 *  queues the prompts that are due. A capture happens when the band's interval has elapsed since
 *  the last capture (first_capture_delay after the first frame for the first one), the band is
 *  not too fast, no condition in blocking_flags holds, and the view is not redundant (then
 *  CK_GUIDE_MOVE_TO_NEW_VIEW is set and the capture stays due). A prompt fires when its
 *  condition has held for prompt_delay s in total (pitch_delay for tilt) within the last
 *  prompt_window s (so a condition that flickers on hand-held motion still fires), and again at
 *  most every prompt_repeat while it stays active (until its held time in the window falls
 *  below half the delay). With tracking CK_TRACKING_LIMITED and a tracking_reason, both
 *  CK_GUIDE_TRACKING_LIMITED and the reason's flag are set, and the reason's prompt replaces the
 *  generic "tracking is limited" one.
 *  Box gates, advice or block (since 0.2): the box is the operator's loose bound on the object, and
 *  real operators take close views of large objects. So a condition the box raises is advice
 *  (flagged and prompted, not in ck_guidance.blocked) where the view still shows the object:
 *  CK_GUIDE_POINT_AT_OBJECT and CK_GUIDE_OBJECT_OUT_OF_FRAME when the part of the box's silhouette
 *  inside the image covers at least half of the image, CK_GUIDE_OBJECT_OUT_OF_FRAME also while at
 *  least half of the silhouette is in the image (it blocks when the object is mostly outside the
 *  image), and CK_GUIDE_TOO_CLOSE measured from the box (no depth) unless the camera is inside
 *  the box. The data: on 7 real object captures from the HMC capture app (545 frames, 1-3 s apart,
 *  each taken by an operator and used to train a NeRF; chairs of 0.7-1.3 m and a hand sanitizer),
 *  blocking on every raised box condition refused 90 % of the frames (out of frame on 492: close
 *  views with 20-33 % of a chair's box in the image while it fills 90 % of the image; too close
 *  to the box on 93; off-axis on 14); with these rules the default preset refuses 5.3 % for
 *  geometry (29 frames: the camera inside the box on 16, tilt on 7, mostly out of frame on 6,
 *  off-axis with the box small in the image on 1), at most 7.3 % of any one capture. Drift fires CK_EVENT_DRIFT at once and aborts the
 *  session: that frame reports CK_GUIDE_DRIFT (capture 0), and later updates return CK_E_STATE
 *  until ck_scheduler_reset().
 *  @return CK_OK with *guidance_out; CK_E_INVALID_ARGUMENT (NULL, bad struct_size, non-finite or
 *  non-increasing timestamp, non-rigid pose, unknown tracking, bad box, NaN/inf sharpness,
 *  non-zero reserved, a bad depth map or depth intrinsics that do not match it; since 0.2: bad
 *  intrinsics, unknown tracking_reason, NaN/inf or > 1 mean_luma);
 *  CK_E_UNSUPPORTED (frame from a newer header with non-zero extra bytes); CK_E_STATE (aborted
 *  after drift). On an error the scheduler is unchanged and *guidance_out is not written. Since 0.1. */
CK_API ck_status ck_scheduler_update(ck_guidance *guidance_out, ck_scheduler *scheduler,
                                     const ck_scheduler_frame *frame);

/** Removes the oldest queued event into *event_out.
 *  @return CK_OK; CK_END when the queue is empty (the normal end of a polling loop:
 *  `while (ck_scheduler_next_event(&e, s) == CK_OK) ...`; *event_out not written);
 *  CK_E_INVALID_ARGUMENT (NULL). Since 0.1. */
CK_API ck_status ck_scheduler_next_event(ck_event *event_out, ck_scheduler *scheduler);

/** Forgets every frame, capture and queued event (and an abort after drift); keeps the options.
 *  @return CK_OK or CK_E_INVALID_ARGUMENT (NULL). Since 0.1. */
CK_API ck_status ck_scheduler_reset(ck_scheduler *scheduler);

/* --------------------------------------------------------------------------------------------
 * Coverage
 * -------------------------------------------------------------------------------------------- */

/** An opaque coverage counter bound to a box. */
typedef struct ck_coverage ck_coverage;

/** Coverage options. Start from CK_COVERAGE_OPTIONS_INIT or ck_coverage_options_init(). */
typedef struct ck_coverage_options {
    uint32_t struct_size;        /**< sizeof(ck_coverage_options) of the caller's header */
    uint32_t goal;               /**< centre-ray hits that complete a face, [1, 1000000]; default 10 */
    uint32_t face_mask;          /**< faces counted for completion, bit f = face f, non-zero, bits 0..5; default 0x37 (all but the bottom) */
    uint32_t cells_per_side;     /**< each face is split into n x n cells, [1, 64]; default 4 */
    uint32_t grid_width;         /**< rays per view for the cells: a grid_width x grid_height grid of */
    uint32_t grid_height;        /**< pixel centres across the whole image, each [1, 1024], or both 0 (no cells); default 64 x 48 */
    uint32_t azimuth_bins;       /**< dial bins around +y, [1, 360]; bin 0 is centred in front of the front face; default 24 */
    uint32_t elevation_rings;    /**< dial rings, [1, 90]; default 2 */
    float elevation_min_deg;     /**< the rings split [elevation_min_deg, elevation_max_deg] evenly; */
    float elevation_max_deg;     /**< views outside fall in the nearest ring; -90 <= min < max <= 90; default 0, 60 */
    /* Since 0.2. */
    uint32_t count_inside_views; /**< 1: views from a camera inside the box count; 0 (default): they count nothing
                                      (ck_coverage_add_view gives CK_MISS) and CK_EVENT_INSIDE_BOX is queued once
                                      per spell inside ("Step back") */
} ck_coverage_options;                                             /* 44 bytes (0.1: 40) */

#define CK_COVERAGE_OPTIONS_INIT { (uint32_t)sizeof(ck_coverage_options), 10u, 0x37u, 4u, 64u, 48u, 24u, 2u, 0.0f, 60.0f, 0u }

/** Fills *options_out with the defaults (same as CK_COVERAGE_OPTIONS_INIT). Writes the first
 *  struct_size bytes only, struct_size included: pass sizeof(ck_coverage_options) (the
 *  ck_coverage_options_init() macro below does). @return CK_OK; CK_E_INVALID_ARGUMENT (NULL,
 *  struct_size below the first release's 40 bytes); CK_E_UNSUPPORTED (struct_size above this library's
 *  size: a header newer than the library). Since 0.2. */
CK_API ck_status ck_coverage_options_init_sized(ck_coverage_options *options_out, size_t struct_size);
/** ck_coverage_options_init_sized() for a caller that cannot pass its size (a binary built before 0.2's
 *  sized calls, an FFI calling this symbol): writes the first release's layout only (40 bytes on
 *  64-bit, struct_size 40), never more, so an older, smaller layout is not overrun; fields added since
 *  keep their defaults when the library reads the struct. In C and C++ the macro below maps
 *  ck_coverage_options_init() to ck_coverage_options_init_sized(). @return CK_OK; CK_E_INVALID_ARGUMENT
 *  (NULL). Since 0.1. */
CK_API ck_status ck_coverage_options_init(ck_coverage_options *options_out);
#define ck_coverage_options_init(options_out) ck_coverage_options_init_sized((options_out), sizeof(ck_coverage_options))

/** Creates a coverage counter for `box` (copied). options may be NULL (defaults). On success *out
 *  owns it (release with ck_coverage_free()); on failure *out is set to NULL.
 *  @return CK_OK; CK_E_INVALID_ARGUMENT (out or box NULL, bad box, option out of range: the
 *  message names the field); CK_E_UNSUPPORTED (newer struct_size with non-zero extra bytes). Since 0.1. */
CK_API ck_status ck_coverage_create(ck_coverage **out, const ck_box *box, const ck_coverage_options *options);

/** Releases a coverage counter. NULL is accepted. A counter borrowed from a session
 *  (ck_session_coverage) is not released (the session frees it; the thread's last error message
 *  says so). Since 0.1. */
CK_API void ck_coverage_free(ck_coverage *coverage);

/** Adds one captured view.
 *  (1) Reference mode: the ray through the image centre, pixel (width/2, height/2), gives the face
 *  it hits first (ck_ray_box rules; from inside the box, its exit face) +1. When a face's count
 *  reaches the goal, CK_EVENT_SIDE_COMPLETED is queued, exactly once (until a reset); when every
 *  face of face_mask has, CK_EVENT_ALL_SIDES_COMPLETED, once.
 *  (2) Cells: the grid of grid_width x grid_height rays across the image (ck_intrinsics_scale of
 *  intrinsics, same answers as ck_ray_box_grid) adds 1 to each cell it hits (once per view).
 *  (3) Dial: when the box centre is in front of the camera and projects into the image, the bin
 *  of the direction from the box centre to the camera (in the box frame) gets +1; when every bin
 *  of a ring has a view, CK_EVENT_RING_COMPLETED (once).
 *  A camera inside the box counts nothing (unless count_inside_views): CK_MISS, and
 *  CK_EVENT_INSIDE_BOX once per spell inside.
 *  *face_out = the face the centre ray hit, or CK_FACE_NONE.
 *  @return CK_OK (centre ray hit); CK_MISS (it missed, cells and dial are still updated; or the
 *  camera is inside the box);
 *  CK_E_INVALID_ARGUMENT (NULL, bad pose or intrinsics, non-finite timestamp; nothing changes). Since 0.1. */
CK_API ck_status ck_coverage_add_view(int32_t *face_out, ck_coverage *coverage, const ck_mat4 *camera_pose,
                                      const ck_intrinsics *intrinsics, double timestamp);

/** Re-binds to an edited box (copied). Every count is kept: counts belong to faces, cells and
 *  dial bins of the box's own frame, so they move and turn with it.
 *  @return CK_OK or CK_E_INVALID_ARGUMENT (NULL, bad box; nothing changes). Since 0.1. */
CK_API ck_status ck_coverage_set_box(ck_coverage *coverage, const ck_box *box);

/** Forgets every view, count and queued event; keeps the box and the options.
 *  @return CK_OK or CK_E_INVALID_ARGUMENT (NULL). Since 0.1. */
CK_API ck_status ck_coverage_reset(ck_coverage *coverage);

/** Coverage of one face. */
typedef struct ck_face_coverage {
    uint32_t count;       /**< centre-ray hits */
    uint32_t goal;
    float progress;       /**< min(count, goal) / goal */
    float color[3];       /**< RGB: yellow (1, 1, 0) at progress 0 to cyan (0, 1, 1) at 1: (1 - p, 1, p) */
    float opacity;        /**< 0.25 + 0.5 * progress */
    float cell_fraction;  /**< fraction of the face's cells hit by at least one view */
    int32_t completed;    /**< 1 when count >= goal */
    uint32_t reserved;    /**< 0 */
} ck_face_coverage;                                                /* 40 bytes, frozen */

/** *out = the coverage of face `face` (a ck_face, 0..5).
 *  @return CK_OK or CK_E_INVALID_ARGUMENT (NULL, face out of range). Since 0.1. */
CK_API ck_status ck_coverage_face(ck_face_coverage *out, const ck_coverage *coverage, int32_t face);

/** Overall coverage. */
typedef struct ck_coverage_summary {
    uint32_t views;            /**< views added */
    uint32_t faces_completed;  /**< faces of face_mask at their goal */
    int32_t all_completed;     /**< 1 when every face of face_mask is */
    float completion;          /**< mean progress of the faces of face_mask, 0..1 */
    float dial_fraction;       /**< fraction of dial bins with at least one view */
    float cell_fraction;       /**< fraction of the cells of the faces of face_mask hit at least once */
    uint32_t reserved[2];      /**< 0 */
} ck_coverage_summary;                                             /* 32 bytes, frozen */

/** *out = the overall coverage. @return CK_OK or CK_E_INVALID_ARGUMENT (NULL). Since 0.1. */
CK_API ck_status ck_coverage_summarize(ck_coverage_summary *out, const ck_coverage *coverage);

/** Per-cell view counts of all faces: dst[(face * n + row) * n + column] with
 *  n = cells_per_side; columns run along the face frame's +x and row 0 is at its +y edge (see
 *  ck_box_face: viewed from outside, side faces read like an image with +y up; the top face's
 *  row 0 is at the back edge, the bottom face's at the front edge).
 *  dst_capacity and *written_out (may be NULL) count uint32_t elements: *written_out = 6 * n * n
 *  on CK_OK and on CK_E_BUFFER_TOO_SMALL (dst_capacity too small; nothing written).
 *  @return CK_OK, CK_E_BUFFER_TOO_SMALL or CK_E_INVALID_ARGUMENT (NULL, or a dst_capacity of more
 *  than SIZE_MAX/2 bytes). Since 0.1. */
CK_API ck_status ck_coverage_cells(uint32_t *dst, size_t dst_capacity, size_t *written_out,
                                   const ck_coverage *coverage);

/** Dial view counts, ring-major: dst[ring * azimuth_bins + bin]. Ring 0 is the lowest;
 *  bin b is centred on azimuth b * 2pi / azimuth_bins, where azimuth 0 is in front of the front
 *  face (box -z) and pi/2 beside the left face (box -x): counter-clockwise seen from above.
 *  *written_out (may be NULL) = elevation_rings * azimuth_bins on CK_OK and CK_E_BUFFER_TOO_SMALL
 *  (nothing written).
 *  @return CK_OK, CK_E_BUFFER_TOO_SMALL or CK_E_INVALID_ARGUMENT (NULL, or a dst_capacity of more
 *  than SIZE_MAX/2 bytes). Since 0.1. */
CK_API ck_status ck_coverage_dial(uint32_t *dst, size_t dst_capacity, size_t *written_out,
                                  const ck_coverage *coverage);

/** Where to go next. */
typedef struct ck_coverage_hint {
    float move_angle;        /**< angle to walk around the object, rad in (-pi, pi]: positive = to your
                                  left while facing the object (clockwise seen from above) */
    float camera_azimuth;    /**< the camera's azimuth around the box (dial convention), rad */
    float target_azimuth;    /**< the target bin's centre azimuth, rad in (-pi, pi] */
    float camera_elevation;  /**< the camera's elevation seen from the box centre, rad */
    int32_t ring;            /**< the target ring (see ck_coverage_suggest) */
    int32_t bin;             /**< the target bin, on the side the captured views saw least (see ck_coverage_suggest) */
    uint32_t target_count;   /**< that bin's views */
    int32_t ring_delta;      /**< ring minus the camera's ring: > 0 go higher, < 0 lower, 0 stay */
} ck_coverage_hint;                                                /* 32 bytes, frozen */

/** *out = where to go next from the camera at camera_pose ("move left ~60 degrees, higher"): toward
 *  the side of the box the captured views saw least (since 0.2; 0.1 aimed at the dial bin where
 *  the camera had stood least, which on real captures pointed at the least-seen side in 30 % of
 *  hints, chance being 25 %).
 *  The side: of the side faces (front, left, back, right) in face_mask (all four if none is), the
 *  one with the smallest seen amount, the sum over its cells of min(views that saw the cell,
 *  goal) (the cells of ck_coverage_cells; with a 0 x 0 grid, min(centre-ray hits, goal)); ties:
 *  the fewer centre-ray hits (up to goal), then the nearest to the camera's azimuth, then front,
 *  left, back, right.
 *  The ring: the highest when the top face is in face_mask and seen less than that side (in the
 *  same order); else the ring of a level view (elevation 0, or the nearest ring), which sees the
 *  side face on.
 *  The bin: of the side's sector, the bins centred less than 45 degrees from the side's azimuth
 *  (the nearest bin if none is), the one with the fewest views in that ring; ties: the nearest to
 *  the side's azimuth, then to the camera's.
 *  On 7 real object captures (545 views; a hint after each) the side it points at is the least
 *  seen in 100 % of hints and one of the two least seen in 100 % (a side's sector holds its
 *  azimuth +-45 degrees).
 *  @return CK_OK or CK_E_INVALID_ARGUMENT (NULL, bad pose). Since 0.1. */
CK_API ck_status ck_coverage_suggest(ck_coverage_hint *out, const ck_coverage *coverage, const ck_mat4 *camera_pose);

/** Removes the oldest queued coverage event (SIDE_COMPLETED, ALL_SIDES_COMPLETED, RING_COMPLETED)
 *  into *event_out. @return CK_OK; CK_END when the queue is empty (nothing written);
 *  CK_E_INVALID_ARGUMENT (NULL). Since 0.1. */
CK_API ck_status ck_coverage_next_event(ck_event *event_out, ck_coverage *coverage);

/* --------------------------------------------------------------------------------------------
 * Sharpness
 * -------------------------------------------------------------------------------------------- */

/** Sharpness of an 8-bit luma image (CK_IMAGE_FORMAT_GRAY8, e.g. the Y plane of a camera frame): the variance
 *  (population, 1/N) of the 3x3 Laplacian up + down + left + right - 4 * centre over the interior
 *  pixels ((width - 2) x (height - 2) values). Higher is sharper; the scale depends on the scene
 *  and the resolution, so a blur threshold (min_sharpness) is chosen per rig. Thread-safe.
 *  @return CK_OK or CK_E_INVALID_ARGUMENT (NULL, not GRAY8, width or height outside
 *  3..CK_MAX_IMAGE_DIMENSION, stride < width or too large). Since 0.1. */
CK_API ck_status ck_sharpness_score(float *score_out, const ck_image *luma);

#ifdef __cplusplus
}
#endif

#endif /* CAPTUREKIT_CK_GUIDANCE_H */
