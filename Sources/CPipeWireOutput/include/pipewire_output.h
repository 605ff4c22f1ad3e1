#ifndef SCENESOUND_PIPEWIRE_OUTPUT_H
#define SCENESOUND_PIPEWIRE_OUTPUT_H

#include <stdint.h>

/* Plays the mix as one PipeWire stream node (media.class Stream/Output/Audio), over
 * libpipewire's own protocol. libpipewire's loop and stream API are macros and inline callbacks
 * that Swift cannot call, so this thin layer does the calls.
 *
 * Threads: a pw_thread_loop of its own runs the connection (state changes, the registry,
 * reconnection timers, events); the render callback runs on libpipewire's data thread (the
 * node's process callback, PW_STREAM_FLAG_RT_PROCESS), under the real-time rules: nothing there
 * allocates, locks, logs or waits. */

typedef struct ss_pw_output ss_pw_output;

/* Fills exactly block_frames interleaved Float32 frames of `channels` channels (2 unless
 * ss_pw_output_set_channels says otherwise). On the data thread. */
typedef void (*ss_pw_output_render_cb)(void *userdata, float *interleaved, uint32_t frames, uint32_t channels);

/* The most channels a stream plays (7.1). */
#define SS_PW_OUTPUT_MAX_CHANNELS 8

enum ss_pw_output_event {
	/* The stream is running (detail: the sink it plays on, or "" while not known yet). */
	SS_PW_OUTPUT_CONNECTED = 1,
	/* PipeWire went away or could not be reached (detail: why); retries follow. Once per outage. */
	SS_PW_OUTPUT_DISCONNECTED = 2,
	/* A retry is starting (detail: the attempt number since the last loss). */
	SS_PW_OUTPUT_RECONNECTING = 3,
	/* Something a retry alone will not fix, e.g. an unknown target (detail: what). Once per outage. */
	SS_PW_OUTPUT_FAILED = 4,
};

/* On the output's loop thread; detail is valid during the call. Must not call back into the
 * output's stop or free. */
typedef void (*ss_pw_output_event_cb)(void *userdata, int event, const char *detail);

struct ss_pw_output_config {
	/* The core socket's absolute path, or NULL for libpipewire's lookup ($PIPEWIRE_REMOTE,
	 * pipewire-0 in $PIPEWIRE_RUNTIME_DIR or $XDG_RUNTIME_DIR). */
	const char *remote;
	const char *application_name;
	const char *icon_name;
	const char *node_name;
	const char *description;
	const char *media_role;
	uint32_t rate_hz;
	uint32_t block_frames;
	/* Reconnection delays: the first, doubling up to the maximum. */
	double retry_initial_seconds;
	double retry_maximum_seconds;
};

/* The strings are copied. NULL when out of memory or the loop thread cannot be made. */
ss_pw_output *ss_pw_output_new(const struct ss_pw_output_config *config,
                               ss_pw_output_render_cb render, ss_pw_output_event_cb event, void *userdata);
/* Starts the loop thread and the first connection (a failure is retried and reported through
 * events). 0, or a negative errno. */
int ss_pw_output_start(ss_pw_output *output);
/* Disconnects and joins the loop thread; afterwards no callback comes. Not from a callback. */
void ss_pw_output_stop(ss_pw_output *output);
void ss_pw_output_free(ss_pw_output *output);

/* target: a sink's node.name (or object.serial), NULL = the default sink, followed when it
 * changes. stays: node.dont-reconnect, the session manager never moves the stream (not even
 * when the default sink changes). Reopens the stream at once if either changed. */
void ss_pw_output_set_target(ss_pw_output *output, const char *target, int stays);
/* Plays `count` channels (1 to SS_PW_OUTPUT_MAX_CHANNELS) from now on, each a loudspeaker in
 * the WAVE / SMPTE order's numbering (0 FL, 1 FR, 2 FC, 3 LFE, 4 RL, 5 RR, 6 SL, 7 SR), in the
 * order the render callback fills them. Reopens the stream at once if they changed (kept across
 * reconnections and targets). 0, or -EINVAL for a count or speaker out of range. */
int ss_pw_output_set_channels(ss_pw_output *output, uint32_t count, const uint32_t *speakers);
/* Inactive: the node stops being scheduled (no process calls, the sink may suspend). */
void ss_pw_output_set_active(ss_pw_output *output, int active);

/* From the stream's last cycle: delay to the device + resampler + queued + rendered but not yet
 * handed over, in seconds; a negative number while not streaming. Lock-free. */
double ss_pw_output_latency_seconds(const ss_pw_output *output);
/* Cycles that found no buffer to fill (the graph ran without our audio). Lock-free. */
uint64_t ss_pw_output_underruns(const ss_pw_output *output);
/* Times the stream ran again after being lost. Lock-free. */
uint64_t ss_pw_output_reconnects(const ss_pw_output *output);
/* Whether the stream is streaming now. Lock-free. */
int ss_pw_output_is_streaming(const ss_pw_output *output);
/* Whether the stream is linked to a sink (streaming, or inactive on purpose). Lock-free. */
int ss_pw_output_is_connected(const ss_pw_output *output);
/* The node.name of the sink the stream is linked to, into buffer (""), if known. */
void ss_pw_output_sink_name(ss_pw_output *output, char *buffer, uint32_t size);
/* The graph's quantum at the last cycle, in frames (0 before the first). Lock-free. */
uint32_t ss_pw_output_quantum_frames(const ss_pw_output *output);

#endif
