#ifndef SCENESOUND_PIPEWIRE_CAPTURE_H
#define SCENESOUND_PIPEWIRE_CAPTURE_H

#include <stdint.h>

/* Records single PipeWire nodes (other apps' playback streams) over PipeWire's own protocol.
 * libpipewire's loop and stream API are macros and inline callbacks that Swift cannot call, so
 * this thin layer does the calls. Everything runs on the thread that calls
 * ss_pw_connection_dispatch (the capture's thread), which the loop's fd wakes, except the
 * audio callback, which comes on libpipewire's (real-time) data thread. */

typedef struct ss_pw_connection ss_pw_connection;
typedef struct ss_pw_capture ss_pw_capture;

/* Interleaved Float32 in the capture's channels (2: FL FR, the others dropped, not remixed; 8:
 * FL FR FC LFE RL RR SL SR, the capture sink's layout, which the app's node plays in), valid
 * during the call; on the data thread, never after
 * ss_pw_capture_free returned. */
typedef void (*ss_pw_capture_audio_cb)(void *userdata, const float *interleaved, uint32_t frames);
/* The stream was unlinked for good (its target went away) or failed. */
typedef void (*ss_pw_capture_ended_cb)(void *userdata);

/* remote: the core socket's absolute path, or NULL for PipeWire's default lookup. NULL on failure. */
ss_pw_connection *ss_pw_connection_new(const char *remote, const char *application_name);
/* Becomes readable when ss_pw_connection_dispatch has work to do. */
int ss_pw_connection_fd(const ss_pw_connection *connection);
/* Runs whatever is ready without waiting. Returns 0, or -1 once the connection is broken. */
int ss_pw_connection_dispatch(ss_pw_connection *connection);
void ss_pw_connection_free(ss_pw_connection *connection);

/* Records the node whose object.serial is target_serial (on pipewire-pulse, a sink input's
 * index), asking the graph for a quantum of latency_frames, in 2 or 8 channels, as a passive
 * node (it never keeps the app's node or its sink running). NULL on failure. */
ss_pw_capture *ss_pw_capture_new(ss_pw_connection *connection, const char *name, uint32_t target_serial,
                                 uint32_t rate_hz, uint32_t latency_frames, uint32_t channels,
                                 ss_pw_capture_audio_cb audio, ss_pw_capture_ended_cb ended, void *userdata);
/* Frames handed to the audio callback so far (read from any thread). */
uint64_t ss_pw_capture_frames(const ss_pw_capture *capture);
/* After this no callback comes. */
void ss_pw_capture_free(ss_pw_capture *capture);

#endif
