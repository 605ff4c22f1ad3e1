/*
 * scenesound.h — the C client library of the SceneSound sound server (libscenesound.so.0).
 *
 * Version 0.1.0 of this header; the library's ABI is "libscenesound.so.0". Functions are only
 * ever added within major version 0; none is removed or changes its signature.
 *
 * Conventions
 *   - Every function that can fail returns an int: 0 (SCENESOUND_OK) or a negative
 *     SCENESOUND_E_* code. scenesound_strerror() names a code; scenesound_last_error_message()
 *     gives the detail of the calling thread's last failure (e.g. the server's message).
 *   - Handles (scenesound_client, scenesound_stream) are opaque. They are looked up in a table,
 *     never dereferenced: a NULL handle gives SCENESOUND_E_INVALID_ARGUMENT, a handle that was
 *     closed/disconnected (or was never returned by this library) gives SCENESOUND_E_CLOSED.
 *   - Strings are NUL-terminated UTF-8. Scene ids: "" (or NULL) = no scene (the server looks
 *     for the caller's window through _NET_WM_PID, else plays straight ahead); "x11:0x<hex>"
 *     = that X11 window (lowercase hex, no leading zeros, e.g. "x11:0x3a00007"); any other
 *     name = a scene bound with scenesound_scene_bind_window or placed with
 *     scenesound_scene_place (see protocol/SPEC.md, section 7).
 *   - Units are in the parameter names: _hz, _db, _degrees, _metres, _ms, _bytes, _frames.
 *     Coordinates: listener at the origin looking down -z, +x right, +y up; azimuth 0 ahead,
 *     +90 left; elevation +90 up.
 *   - Requests wait at most 10 s for the server's reply (SCENESOUND_E_TIMED_OUT after that),
 *     except the calls documented as waiting for audio to play.
 *
 * Thread safety
 *   - Every function may be called from any thread, concurrently, on the same or different
 *     handles. A client multiplexes all its requests over one connection; replies are matched
 *     by id, so a blocking call on one thread does not hold up calls on other threads.
 *   - Concurrent scenesound_stream_write calls on one stream are serialised (each call's data
 *     stays contiguous). scenesound_stream_close from another thread wakes a blocked
 *     scenesound_stream_write, which then returns SCENESOUND_E_CLOSED.
 *   - The library starts threads of its own: one reader per client (it never calls your code)
 *     and one render thread per callback stream, which calls your render callback.
 *   - The library links its own copy of the Swift runtime, hidden inside it. Loading it into a
 *     process that also runs Swift code works for C-level use but means two Swift runtimes.
 *
 * Sounds by name and file
 *   The library links no audio-file, codec or sound-theme library. "System" and "alert"
 *   sounds are samples in the server's cache, played by name (scenesound_play_system_sound,
 *   scenesound_play_alert_sound, scenesound_play_sample). A name plays if the cache holds it —
 *   uploaded with scenesound_sample_upload (raw PCM), or by the CLI (`scenesound system NAME`
 *   resolves freedesktop sound-theme names and files and uploads them) — or if the server can
 *   resolve it itself. Otherwise the call returns SCENESOUND_E_UNKNOWN_SOUND: upload raw PCM
 *   under that name and play again. The cache is bounded (least recently used samples are
 *   evicted), so be ready to upload again. To play a file, decode it yourself and write its PCM
 *   to a stream (or run `scenesound play FILE`).
 */
#ifndef SCENESOUND_H
#define SCENESOUND_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define SCENESOUND_VERSION_MAJOR 0
#define SCENESOUND_VERSION_MINOR 1
#define SCENESOUND_VERSION_PATCH 0

typedef struct scenesound_client scenesound_client;
typedef struct scenesound_stream scenesound_stream;

/* Status codes. Client-side codes are -1 … -99; the server's refusals are -(100 + the
 * protocol's error code), SPEC.md section 9; codes not listed here may appear for new server
 * errors and mean a generic refusal. */
enum {
    SCENESOUND_OK = 0,
    SCENESOUND_E_INVALID_ARGUMENT = -1,  /* NULL pointer, value out of range, invalid UTF-8 */
    SCENESOUND_E_CLOSED = -2,            /* handle closed, disconnected, or never valid */
    SCENESOUND_E_NO_SOCKET_PATH = -3,    /* NULL path and neither SCENESOUND_SOCKET nor XDG_RUNTIME_DIR set */
    SCENESOUND_E_CANNOT_CONNECT = -4,    /* nothing listens at the socket (is scenesoundd running?) */
    SCENESOUND_E_DISCONNECTED = -5,      /* the connection ended: the server went away or closed it */
    SCENESOUND_E_TIMED_OUT = -6,         /* no reply in time; the connection is still usable */
    SCENESOUND_E_STREAM_FAILED = -7,     /* the server failed or ended the stream; close it */
    SCENESOUND_E_PROTOCOL = -8,          /* the server broke the protocol; the connection is closed */
    SCENESOUND_E_NO_RESOURCES = -9,      /* out of memory or threads */
    SCENESOUND_E_WRONG_THREAD = -10,     /* a call that would wait for itself (e.g. drain in its own render callback) */
    SCENESOUND_E_NOT_PULL_STREAM = -11,  /* write on a callback stream (its data comes from the callback) */
    SCENESOUND_E_INTERNAL = -99,

    SCENESOUND_E_SERVER = -100,          /* base of the server's codes */
    SCENESOUND_E_UNSUPPORTED_VERSION = -103,
    SCENESOUND_E_UNEXPECTED_MESSAGE = -104,
    SCENESOUND_E_MALFORMED_PAYLOAD = -106,
    SCENESOUND_E_SERVER_INVALID_ARGUMENT = -107,
    SCENESOUND_E_BAD_FORMAT = -108,      /* also found locally: unknown format, rate, channels, partial frames */
    SCENESOUND_E_UNKNOWN_STREAM = -109,
    SCENESOUND_E_UNKNOWN_SCENE = -110,   /* also: scenesound_scene_get_position of an unlisted scene */
    SCENESOUND_E_UNKNOWN_SOUND = -111,   /* no such sample in the cache: upload it, play again */
    SCENESOUND_E_LIMIT_EXCEEDED = -112,  /* too many streams, sample too large, … */
    SCENESOUND_E_NOT_PERMITTED = -114,   /* e.g. binding an "x11:" scene */
    SCENESOUND_E_SERVER_INTERNAL = -115
};

/* Sample formats: interleaved PCM, little-endian. */
enum {
    SCENESOUND_FORMAT_S16LE = 1,
    SCENESOUND_FORMAT_S32LE = 2,
    SCENESOUND_FORMAT_F32LE = 3
};

/* Stream kinds: playback (any length); system (≤ 30 s, low latency); alert (like system, and
 * ducks playback while it plays). */
enum {
    SCENESOUND_KIND_PLAYBACK = 1,
    SCENESOUND_KIND_SYSTEM = 2,
    SCENESOUND_KIND_ALERT = 3
};

/* Spatial modes: anchored at the scene (head-tracked), head-locked, or off (plain stereo). */
enum {
    SCENESOUND_SPATIAL_ANCHORED = 1,
    SCENESOUND_SPATIAL_HEAD_LOCKED = 2,
    SCENESOUND_SPATIAL_OFF = 3
};

/* scenesound_stream_open flags. */
enum {
    /* Playback streams only: repeat what was written up to the first drain until closed.
     * The first scenesound_stream_drain returns after one pass; later writes fail. */
    SCENESOUND_STREAM_LOOP = 1u
};

/* scenesound_play_sample_with_flags flags. */
enum {
    /* Alerts only: also ask the window manager to draw attention to the scene's window
     * (_NET_WM_STATE_DEMANDS_ATTENTION), as `scenesound alert --flash`. */
    SCENESOUND_PLAY_DEMAND_ATTENTION = 1u
};

/* How a sample play ended (scenesound_playback_wait). */
enum {
    SCENESOUND_PLAYBACK_COMPLETED = 1,
    SCENESOUND_PLAYBACK_COALESCED = 2,   /* merged into an identical sound requested just before */
    SCENESOUND_PLAYBACK_INTERRUPTED = 3
};

/* ---- Library ---------------------------------------------------------------------------- */

/* "0.1.0": the library's version (may be newer than this header's). */
const char *scenesound_version(void);

/* A static English description of a status code; never NULL. */
const char *scenesound_strerror(int status);

/* The calling thread's last failure in detail (e.g. "the server refused: stream 3 is not open
 * (unknown_stream)"); "" when the last call succeeded. Valid until this thread's next call
 * into the library. */
const char *scenesound_last_error_message(void);

/* Frees memory the library returned (scenesound_status_json). NULL is ignored. */
void scenesound_free(void *memory);

/* ---- Connection ------------------------------------------------------------------------- */

/* Connects and performs the handshake. socket_path NULL or "": $SCENESOUND_SOCKET, else
 * $XDG_RUNTIME_DIR/scenesound/socket. client_name (NULL = "") is shown by `scenesound status`.
 * On success *out_client is a new handle; on failure it is set to NULL. */
int scenesound_connect(const char *socket_path, const char *client_name, scenesound_client **out_client);

/* Closes the connection. Every stream of the client is closed (a callback stream's render
 * thread is stopped and joined) and its handle becomes invalid; sample plays still running
 * are cut. NULL and already disconnected handles are ignored. */
void scenesound_disconnect(scenesound_client *client);

/* The server's output rate (streams at other rates are resampled by the server). */
int scenesound_server_sample_rate(scenesound_client *client, uint32_t *out_rate_hz);

/* The server's status document, NUL-terminated, allocated: release it with scenesound_free.
 * JSON of the schema in the protocol specification (SPEC.md section 6.8, "version": 1), as
 * `scenesound status --json` prints it: "clients" lists each connection's client_name and pid. */
int scenesound_status_json(scenesound_client *client, char **out_json);

/* ---- Scenes (server-wide, shared by every client of the user) ------------------------------ */

/* A placement lasts until unbound; a binding until unbound or a minute after its window closed;
 * any scene while something plays at it (SPEC.md section 6.5). Then the server frees it. When all of the server's
 * scene slots are in use, naming a new scene gives SCENESOUND_E_LIMIT_EXCEEDED. */

/* Anchors the named scene to an X11 top-level window (window_id non-zero). "x11:" scenes
 * name their window themselves and give SCENESOUND_E_NOT_PERMITTED. */
int scenesound_scene_bind_window(scenesound_client *client, const char *scene_id, uint32_t window_id);

/* Puts the named scene at a fixed place: azimuth -360…360, elevation -90…90, distance
 * 0.01…1000 m. Replaces any window binding. */
int scenesound_scene_place(scenesound_client *client, const char *scene_id,
                           float azimuth_degrees, float elevation_degrees, float distance_metres);

/* Removes a binding or placement (SCENESOUND_E_UNKNOWN_SCENE when there is none). */
int scenesound_scene_unbind(scenesound_client *client, const char *scene_id);

/* Where the server currently places a scene it lists (bound, placed, or an "x11:" window in
 * use). SCENESOUND_E_UNKNOWN_SCENE when the server does not list it. Any out pointer may be NULL. */
int scenesound_scene_get_position(scenesound_client *client, const char *scene_id,
                                  float *out_azimuth_degrees, float *out_elevation_degrees,
                                  float *out_distance_metres);

/* ---- System and alert sounds (the server's sample cache) --------------------------------- */

/* Uploads whole frames of PCM (at most 30 s, and the server's size limit) under `name`
 * (1…255 bytes), replacing any sample of that name; returns once the server has it. */
int scenesound_sample_upload(scenesound_client *client, const char *name, int format,
                             uint32_t rate_hz, int channels, const void *pcm, size_t pcm_bytes);

/* Plays a cached sample. kind: SCENESOUND_KIND_SYSTEM or _ALERT. volume_db -200…24 (0 = unity).
 * out_play_id (may be NULL) names the play for scenesound_playback_wait. Returns when the play
 * has started; the play is cut if the client disconnects before it ends. */
int scenesound_play_sample(scenesound_client *client, const char *name, int kind, int spatial_mode,
                           float volume_db, const char *scene_id, uint32_t *out_play_id);

/* The same with flags: 0 or SCENESOUND_PLAY_DEMAND_ATTENTION (with kind alert; other kinds and
 * unknown bits give SCENESOUND_E_INVALID_ARGUMENT). */
int scenesound_play_sample_with_flags(scenesound_client *client, const char *name, int kind, int spatial_mode,
                                      float volume_db, const char *scene_id, unsigned int flags,
                                      uint32_t *out_play_id);

/* scenesound_play_sample with kind system / alert, anchored at the scene. */
int scenesound_play_system_sound(scenesound_client *client, const char *name, const char *scene_id,
                                 float volume_db, uint32_t *out_play_id);
int scenesound_play_alert_sound(scenesound_client *client, const char *name, const char *scene_id,
                                float volume_db, uint32_t *out_play_id);

/* Waits until a play ends (timeout_ms < 0: as long as it lasts). *out_reason (may be NULL)
 * gets a SCENESOUND_PLAYBACK_* value. */
int scenesound_playback_wait(scenesound_client *client, uint32_t play_id, int timeout_ms, int *out_reason);

/* ---- Streams (push mode) ----------------------------------------------------------------- */

/* Opens a stream: kind (SCENESOUND_KIND_*), format (SCENESOUND_FORMAT_*), rate 8000…192000 Hz,
 * 1 to 8 channels (3 to 8: surround, the standard layout for the count in WAVE order — 3.0,
 * quad, 5.0, 5.1 FL FR FC LFE BL BR, 7.0, 7.1 FL FR FC LFE BL BR SL SR — from a protocol
 * version 2 server on), scene (NULL/"" = none), spatial mode (SCENESOUND_SPATIAL_*), volume_db
 * -200…24, flags (0 or SCENESOUND_STREAM_LOOP). A bad format gives SCENESOUND_E_BAD_FORMAT
 * without contacting the server; too many streams SCENESOUND_E_LIMIT_EXCEEDED. */
int scenesound_stream_open(scenesound_client *client, int kind, int format, uint32_t rate_hz, int channels,
                           const char *scene_id, int spatial_mode, float volume_db, unsigned flags,
                           scenesound_stream **out_stream);

/* Sends pcm_bytes of PCM (whole frames in the stream's format, else SCENESOUND_E_BAD_FORMAT).
 * Blocks while the server's buffer for the stream is full (credit flow control: the server
 * takes audio about as fast as it plays it, plus ~0.4 s of buffer). Returns once all of it is
 * sent (not played). */
int scenesound_stream_write(scenesound_stream *stream, const void *pcm, size_t pcm_bytes);

/* Blocks until everything written so far has been played out. The stream stays open: write
 * more, drain again. On a callback stream: waits until the callback ended the stream (returned
 * fewer frames than asked) and that audio was played. */
int scenesound_stream_drain(scenesound_stream *stream);

/* Changes the volume (ramped) or the scene of an open stream. */
int scenesound_stream_set_volume(scenesound_stream *stream, float volume_db);
int scenesound_stream_set_scene(scenesound_stream *stream, const char *scene_id);

/* Stops the stream at once (unplayed audio is discarded, with a short fade) and frees the
 * handle: later calls with it return SCENESOUND_E_CLOSED. Stops and joins a callback stream's
 * render thread first (from inside its own callback it is stopped without joining). Returns
 * 0 also when the server is already gone. */
int scenesound_stream_close(scenesound_stream *stream);

/* ---- Streams (pull mode, for synthesizers) ------------------------------------------------ */

/* Fills `buffer` with up to `frames` frames of interleaved PCM in the stream's format and
 * returns how many it wrote. Returning fewer than `frames` (0 included) ends the stream: the
 * library sends them, drains, and never calls again. Called on the library's render thread,
 * ahead of the output by up to the server's stream buffer (~0.4 s) plus one period. It may
 * call any scenesound function except a drain of its own stream. */
typedef size_t (*scenesound_render_callback)(void *user_data, void *buffer, size_t frames);

/* Opens a stream like scenesound_stream_open and starts a render thread that calls `render`
 * for period_frames frames at a time (0: 10 ms at rate_hz) whenever the server has room,
 * paced by the server's credit. user_data is passed through untouched. */
int scenesound_stream_open_callback(scenesound_client *client, int kind, int format, uint32_t rate_hz,
                                    int channels, const char *scene_id, int spatial_mode, float volume_db,
                                    uint32_t period_frames, scenesound_render_callback render,
                                    void *user_data, scenesound_stream **out_stream);

/* ---- Channel maps (surround in another order than WAVE's) -------------------------------- */

/* The speaker a channel feeds (the protocol's channel_map positions, SPEC.md §11). BL/BR are
 * PulseAudio's rear-left/rear-right, 5.1's surrounds. */
enum {
    SCENESOUND_CHANNEL_FL = 0,
    SCENESOUND_CHANNEL_FR = 1,
    SCENESOUND_CHANNEL_FC = 2,
    SCENESOUND_CHANNEL_LFE = 3,
    SCENESOUND_CHANNEL_BL = 4,
    SCENESOUND_CHANNEL_BR = 5,
    SCENESOUND_CHANNEL_SL = 6,
    SCENESOUND_CHANNEL_SR = 7
};

/* scenesound_stream_open / _open_callback with an explicit channel map: channel_map holds
 * `channels` SCENESOUND_CHANNEL_* values, channel_map[i] being the speaker channel i feeds, each
 * speaker at most once (e.g. 5.1 in the order FL FR SL SR FC LFE); NULL is the standard layout
 * for the count, as scenesound_stream_open. An unknown or repeated speaker gives
 * SCENESOUND_E_BAD_FORMAT without contacting the server. A map other than mono's {FC} or
 * stereo's {FL, FR} needs a protocol version 2 server (else SCENESOUND_E_INVALID_ARGUMENT). */
int scenesound_stream_open_with_channel_map(scenesound_client *client, int kind, int format, uint32_t rate_hz,
                                            int channels, const int *channel_map, const char *scene_id,
                                            int spatial_mode, float volume_db, unsigned flags,
                                            scenesound_stream **out_stream);
int scenesound_stream_open_callback_with_channel_map(scenesound_client *client, int kind, int format,
                                                     uint32_t rate_hz, int channels, const int *channel_map,
                                                     const char *scene_id, int spatial_mode, float volume_db,
                                                     uint32_t period_frames, scenesound_render_callback render,
                                                     void *user_data, scenesound_stream **out_stream);

/* ---- Head tracking ---------------------------------------------------------------------- */

/* Sends the user's head pose (shared by all clients; the latest wins). Orientation: a unit
 * quaternion (norm within 1 ± 0.01) rotating the neutral head into the current one; yaw θ to
 * the left is w = cos(θ/2), y = sin(θ/2). position_metres: NULL or {x, y, z}.
 * timestamp_ns: CLOCK_MONOTONIC when measured, 0 = now. Fire-and-forget: a value the server
 * rejects after sending is reported nowhere but its log. */
int scenesound_set_head_pose(scenesound_client *client, uint64_t timestamp_ns,
                             float w, float x, float y, float z, const float *position_metres);

/* Makes the current head orientation "straight ahead". */
int scenesound_recenter_head(scenesound_client *client);

/* The listener's spatial mode for the output device playing now (Apple's Off / Fixed / Head
 * Tracked), remembered for that device: off = plain stereo, fixed = placed with head poses
 * ignored, head-tracked = placed and turned against the head. The device and the rendering
 * chosen for it (binaural or speakers, and why) are in the status document's "output_device"
 * and "rendering" (scenesound_status_json). */
enum {
    SCENESOUND_DEVICE_SPATIAL_OFF = 0,
    SCENESOUND_DEVICE_SPATIAL_FIXED = 1,
    SCENESOUND_DEVICE_SPATIAL_HEAD_TRACKED = 2
};
int scenesound_set_device_spatial(scenesound_client *client, int spatial);

/* How the output device playing now is rendered, remembered for that device: auto = as its
 * form factor, port, Bluetooth profile and channel map say (scenesoundd --render), headphones =
 * binaural, speakers = panned over its channels. */
enum {
    SCENESOUND_DEVICE_RENDER_AUTO = 0,
    SCENESOUND_DEVICE_RENDER_HEADPHONES = 1,
    SCENESOUND_DEVICE_RENDER_SPEAKERS = 2
};
int scenesound_set_device_render(scenesound_client *client, int render);

#ifdef __cplusplus
}
#endif

#endif /* SCENESOUND_H */
