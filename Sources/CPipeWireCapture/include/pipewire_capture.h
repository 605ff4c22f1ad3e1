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

/* Links that take the node of object.serial app_serial (a sink input's index on pipewire-pulse)
 * to an audio sink other than the one of object.serial sink_serial, as the registry last said:
 * their ids, at most max_links; how many. Links to recordings (streams) are not stray. */
int ss_pw_connection_stray_links(const ss_pw_connection *connection, uint32_t app_serial, uint32_t sink_serial,
                                 uint32_t *link_ids, int max_links);
/* Links from the node of object.serial output_serial to that of input_serial that join two
 * different channel positions (FL to FR), as the registry last said; how many. */
int ss_pw_connection_crossed_links(const ss_pw_connection *connection, uint32_t output_serial, uint32_t input_serial);
/* The object.serial of a node by its id; SPA_ID_INVALID (0xffffffff) if the registry has not
 * told of it. */
uint32_t ss_pw_connection_node_serial(const ss_pw_connection *connection, uint32_t node_id);
/* Called (during ss_pw_connection_dispatch) when a link appeared in the graph. */
typedef void (*ss_pw_links_changed_cb)(void *userdata);
void ss_pw_connection_set_links_changed(ss_pw_connection *connection, ss_pw_links_changed_cb callback, void *userdata);
/* Asks the server to destroy a global (a link); its removal comes as a registry event. */
void ss_pw_connection_destroy_object(ss_pw_connection *connection, uint32_t id);

/* Records the node whose object.serial is target_serial (on pipewire-pulse, a sink input's
 * index), asking the graph for a quantum of latency_frames, in 2 or 8 channels, as a passive
 * node (it never keeps the app's node or its sink running). NULL on failure. */
ss_pw_capture *ss_pw_capture_new(ss_pw_connection *connection, const char *name, uint32_t target_serial,
                                 uint32_t rate_hz, uint32_t latency_frames, uint32_t channels,
                                 ss_pw_capture_audio_cb audio, ss_pw_capture_ended_cb ended, void *userdata);
/* The recording's node id (SPA_ID_INVALID until the server made it). */
uint32_t ss_pw_capture_node_id(const ss_pw_capture *capture);
/* Frames handed to the audio callback so far (read from any thread). */
uint64_t ss_pw_capture_frames(const ss_pw_capture *capture);
/* After this no callback comes. */
void ss_pw_capture_free(ss_pw_capture *capture);

#endif
