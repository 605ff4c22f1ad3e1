#include "pipewire_capture.h"
#include "pipewire_registry.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <pipewire/pipewire.h>
#include <spa/param/audio/format-utils.h>

/* Streams given up, destroyed at the end of the next dispatch: a process call the data thread
 * queued for the loop before the stream was disconnected still refers to it. */
#define SS_PW_RETIRED_MAX 256

struct ss_pw_connection {
	struct pw_stream *retired[SS_PW_RETIRED_MAX];
	int retired_count;
	struct pw_loop *loop;
	struct pw_context *context;
	struct pw_core *core;
	struct spa_hook core_listener;
	struct pw_registry *registry;
	struct spa_hook registry_listener;
	struct ss_pw_view view;   /* what the registry said of the graph, for the stray and crossed link checks */
	ss_pw_links_changed_cb links_changed;
	void *links_changed_userdata;
	int broken;
};

struct ss_pw_capture {
	struct ss_pw_connection *connection;
	struct pw_stream *stream;
	struct spa_hook listener;
	ss_pw_capture_audio_cb audio;
	ss_pw_capture_ended_cb ended;
	void *userdata;
	int was_linked;
	int has_ended;
	uint32_t channels;
	/* Frames delivered so far: written on the data thread, read on the capture's. */
	uint64_t frames_delivered;
};

static void on_core_error(void *data, uint32_t id, int seq, int res, const char *message)
{
	struct ss_pw_connection *connection = data;
	(void)seq; (void)message;
	/* Errors about other objects (a stream's target gone) are the stream's business. */
	if (id == PW_ID_CORE && res == -EPIPE)
		connection->broken = 1;
}

static const struct pw_core_events core_events = {
	PW_VERSION_CORE_EVENTS,
	.error = on_core_error,
};

/* libpipewire's data thread runs our streams' nodes in the graph; in a client it keeps normal
 * priority here (no real-time module took it), and on a busy machine the graph then waited
 * for it: every recording ran short together (32 streams, 0.1-1.6 s a minute). It gets what
 * the render thread gets, SCHED_FIFO 20, where permitted. */
static int make_data_thread_realtime(struct spa_loop *loop, bool async, uint32_t seq,
		const void *data, size_t size, void *user_data)
{
	(void)loop; (void)async; (void)seq; (void)data; (void)size; (void)user_data;
	struct sched_param parameters = { .sched_priority = 20 };
	pthread_setschedparam(pthread_self(), SCHED_FIFO, &parameters);
	return 0;
}

static void on_registry_global(void *data, uint32_t id, uint32_t permissions, const char *type,
		uint32_t version, const struct spa_dict *props)
{
	struct ss_pw_connection *connection = data;
	(void)permissions; (void)version;
	if (ss_pw_view_add(&connection->view, id, type, props) == SS_PW_VIEW_LINK && connection->links_changed != NULL)
		connection->links_changed(connection->links_changed_userdata);
}

static void on_registry_global_remove(void *data, uint32_t id)
{
	struct ss_pw_connection *connection = data;
	ss_pw_view_remove(&connection->view, id);
}

static const struct pw_registry_events registry_events = {
	PW_VERSION_REGISTRY_EVENTS,
	.global = on_registry_global,
	.global_remove = on_registry_global_remove,
};

int ss_pw_connection_stray_links(const ss_pw_connection *connection, uint32_t app_serial, uint32_t sink_serial,
                                 uint32_t *link_ids, int max_links)
{
	const struct ss_pw_node_info *app = ss_pw_view_node_with_serial(&connection->view, app_serial);
	const struct ss_pw_node_info *sink = ss_pw_view_node_with_serial(&connection->view, sink_serial);
	if (app == NULL || max_links <= 0)
		return 0;
	uint32_t found = ss_pw_view_links_to_other_sinks(&connection->view, app->id, sink != NULL ? sink->id : 0,
	                                                 link_ids, (uint32_t)max_links);
	return found < (uint32_t)max_links ? (int)found : max_links;
}

int ss_pw_connection_crossed_links(const ss_pw_connection *connection, uint32_t output_serial, uint32_t input_serial)
{
	const struct ss_pw_node_info *output = ss_pw_view_node_with_serial(&connection->view, output_serial);
	const struct ss_pw_node_info *input = ss_pw_view_node_with_serial(&connection->view, input_serial);
	if (output == NULL || input == NULL)
		return 0;
	int crossed = 0;
	for (uint32_t i = 0; i < connection->view.link_count; i++) {
		const struct ss_pw_link_info *link = &connection->view.links[i];
		crossed += link->output_node == output->id && link->input_node == input->id
			&& ss_pw_view_link_is_crossed(&connection->view, link);
	}
	return crossed;
}

uint32_t ss_pw_connection_node_serial(const ss_pw_connection *connection, uint32_t node_id)
{
	const struct ss_pw_node_info *node = ss_pw_view_node(&connection->view, node_id);
	return node == NULL || node->serial == 0 ? SPA_ID_INVALID : (uint32_t)node->serial;
}

void ss_pw_connection_set_links_changed(ss_pw_connection *connection, ss_pw_links_changed_cb callback, void *userdata)
{
	connection->links_changed = callback;
	connection->links_changed_userdata = userdata;
}

void ss_pw_connection_destroy_object(ss_pw_connection *connection, uint32_t id)
{
	if (connection->registry == NULL)
		return;
	pw_loop_enter(connection->loop);
	pw_registry_destroy(connection->registry, id);
	pw_loop_leave(connection->loop);
}

ss_pw_connection *ss_pw_connection_new(const char *remote, const char *application_name)
{
	static int initialized;
	if (!initialized) {
		pw_init(NULL, NULL);
		initialized = 1;
	}
	struct ss_pw_connection *connection = calloc(1, sizeof(*connection));
	if (connection == NULL)
		return NULL;
	connection->loop = pw_loop_new(NULL);
	if (connection->loop == NULL)
		goto fail;
	connection->context = pw_context_new(connection->loop,
			pw_properties_new(PW_KEY_APP_NAME, application_name, NULL), 0);
	if (connection->context == NULL)
		goto fail;
	struct pw_properties *properties = pw_properties_new(PW_KEY_APP_NAME, application_name, NULL);
	if (remote != NULL)
		pw_properties_set(properties, PW_KEY_REMOTE_NAME, remote);
	pw_loop_enter(connection->loop);
	connection->core = pw_context_connect(connection->context, properties, 0);
	pw_loop_leave(connection->loop);
	if (connection->core == NULL)
		goto fail;
	pw_core_add_listener(connection->core, &connection->core_listener, &core_events, connection);
	pw_loop_enter(connection->loop);
	connection->registry = pw_core_get_registry(connection->core, PW_VERSION_REGISTRY, 0);
	if (connection->registry != NULL)
		pw_registry_add_listener(connection->registry, &connection->registry_listener, &registry_events, connection);
	pw_loop_leave(connection->loop);
	pw_loop_invoke(pw_data_loop_get_loop(pw_context_get_data_loop(connection->context)), make_data_thread_realtime, 0, NULL, 0, false, NULL);
	return connection;
fail:
	ss_pw_connection_free(connection);
	return NULL;
}

int ss_pw_connection_fd(const ss_pw_connection *connection)
{
	return pw_loop_get_fd(connection->loop);
}

static void destroy_retired(ss_pw_connection *connection)
{
	for (int i = 0; i < connection->retired_count; i++)
		pw_stream_destroy(connection->retired[i]);
	connection->retired_count = 0;
}

int ss_pw_connection_dispatch(ss_pw_connection *connection)
{
	pw_loop_enter(connection->loop);
	int retired = connection->retired_count;
	while (pw_loop_iterate(connection->loop, 0) > 0)
		;
	/* Only those retired before this dispatch: its iterations ran what was queued for them. */
	if (retired > 0) {
		for (int i = 0; i < retired; i++)
			pw_stream_destroy(connection->retired[i]);
		for (int i = retired; i < connection->retired_count; i++)
			connection->retired[i - retired] = connection->retired[i];
		connection->retired_count -= retired;
	}
	pw_loop_leave(connection->loop);
	return connection->broken ? -1 : 0;
}

void ss_pw_connection_free(ss_pw_connection *connection)
{
	if (connection == NULL)
		return;
	destroy_retired(connection);
	if (connection->registry != NULL) {
		spa_hook_remove(&connection->registry_listener);
		pw_proxy_destroy((struct pw_proxy *)connection->registry);
	}
	ss_pw_view_clear(&connection->view);
	if (connection->core != NULL) {
		spa_hook_remove(&connection->core_listener);
		pw_core_disconnect(connection->core);
	}
	if (connection->context != NULL)
		pw_context_destroy(connection->context);
	if (connection->loop != NULL)
		pw_loop_destroy(connection->loop);
	free(connection);
}

/* On libpipewire's data thread (RT_PROCESS). Delivered through the capture's thread instead
 * (a process call queued to the loop), bursts of short streams crashed the daemon. */
static void on_process(void *data)
{
	struct ss_pw_capture *capture = data;
	struct pw_buffer *buffer;
	while ((buffer = pw_stream_dequeue_buffer(capture->stream)) != NULL) {
		struct spa_data *d = &buffer->buffer->datas[0];
		if (d->data != NULL && d->chunk != NULL) {
			uint32_t offset = SPA_MIN(d->chunk->offset, d->maxsize);
			uint32_t size = SPA_MIN(d->chunk->size, d->maxsize - offset);
			uint32_t frames = size / (capture->channels * sizeof(float));
			if (frames > 0 && !capture->has_ended) {
				capture->audio(capture->userdata, SPA_PTROFF(d->data, offset, const float), frames);
				__atomic_fetch_add(&capture->frames_delivered, frames, __ATOMIC_RELAXED);
			}
		}
		pw_stream_queue_buffer(capture->stream, buffer);
	}
}

static void on_state_changed(void *data, enum pw_stream_state old, enum pw_stream_state state, const char *error)
{
	struct ss_pw_capture *capture = data;
	(void)old; (void)error;
	if (state == PW_STREAM_STATE_PAUSED || state == PW_STREAM_STATE_STREAMING)
		capture->was_linked = 1;
	/* Unconnected after having been linked: the target is gone (the stream does not
	 * reconnect elsewhere). */
	if (!capture->has_ended && (state == PW_STREAM_STATE_ERROR ||
	    (state == PW_STREAM_STATE_UNCONNECTED && capture->was_linked))) {
		capture->has_ended = 1;
		capture->ended(capture->userdata);
	}
}

static const struct pw_stream_events stream_events = {
	PW_VERSION_STREAM_EVENTS,
	.state_changed = on_state_changed,
	.process = on_process,
};

ss_pw_capture *ss_pw_capture_new(ss_pw_connection *connection, const char *name, uint32_t target_serial,
                                 uint32_t rate_hz, uint32_t latency_frames, uint32_t channels,
                                 ss_pw_capture_audio_cb audio, ss_pw_capture_ended_cb ended, void *userdata)
{
	if (connection->broken || (channels != 2 && channels != 8))
		return NULL;
	struct ss_pw_capture *capture = calloc(1, sizeof(*capture));
	if (capture == NULL)
		return NULL;
	capture->connection = connection;
	capture->audio = audio;
	capture->ended = ended;
	capture->userdata = userdata;
	capture->channels = channels;

	char target[16], latency[32], rate[32];
	snprintf(target, sizeof(target), "%u", target_serial);
	snprintf(latency, sizeof(latency), "%u/%u", latency_frames, rate_hz);
	snprintf(rate, sizeof(rate), "1/%u", rate_hz);
	struct pw_properties *properties = pw_properties_new(
			PW_KEY_MEDIA_TYPE, "Audio",
			PW_KEY_MEDIA_CATEGORY, "Capture",
			PW_KEY_NODE_NAME, name,
			PW_KEY_TARGET_OBJECT, target,
			PW_KEY_NODE_LATENCY, latency,
			PW_KEY_NODE_RATE, rate,
			/* Stereo: FL and FR copied, the sink's other six dropped rather than folded in. */
			PW_KEY_STREAM_DONT_REMIX, channels == 2 ? "true" : "false",
			/* Passive: its link (WirePlumber makes it passive for a passive node) does not
			 * keep the app's node and our sink running, so an app that pauses lets the sink
			 * suspend; the link stays, and the app's first sample after it resumes is here. */
			PW_KEY_NODE_PASSIVE, "true",
			/* The app's node or nothing: WirePlumber 0.5, unlike 0.4, links a stream whose
			 * target.object is not (or no longer) there to the default source, though it has
			 * node.dont-reconnect (PW_STREAM_FLAG_DONT_RECONNECT below), unless this is set;
			 * with it the node is destroyed and the recording ends, as on 0.4 (MonitorRecorder
			 * asks the same of pipewire-pulse's direct monitors). */
			"node.dont-fallback", "true",
			NULL);

	pw_loop_enter(connection->loop);
	capture->stream = pw_stream_new(connection->core, name, properties);
	if (capture->stream == NULL) {
		pw_loop_leave(connection->loop);
		free(capture);
		return NULL;
	}
	pw_stream_add_listener(capture->stream, &capture->listener, &stream_events, capture);

	uint8_t pod_buffer[1024];
	struct spa_pod_builder builder = SPA_POD_BUILDER_INIT(pod_buffer, sizeof(pod_buffer));
	struct spa_audio_info_raw format = {
		.format = SPA_AUDIO_FORMAT_F32,
		.rate = rate_hz,
		.channels = channels,
		.position = { SPA_AUDIO_CHANNEL_FL, SPA_AUDIO_CHANNEL_FR, SPA_AUDIO_CHANNEL_FC, SPA_AUDIO_CHANNEL_LFE,
		              SPA_AUDIO_CHANNEL_RL, SPA_AUDIO_CHANNEL_RR, SPA_AUDIO_CHANNEL_SL, SPA_AUDIO_CHANNEL_SR },
	};
	const struct spa_pod *params[1];
	params[0] = spa_format_audio_raw_build(&builder, SPA_PARAM_EnumFormat, &format);
	int result = pw_stream_connect(capture->stream, PW_DIRECTION_INPUT, PW_ID_ANY,
			PW_STREAM_FLAG_AUTOCONNECT | PW_STREAM_FLAG_MAP_BUFFERS | PW_STREAM_FLAG_DONT_RECONNECT | PW_STREAM_FLAG_RT_PROCESS,
			params, 1);
	pw_loop_leave(connection->loop);
	if (result < 0) {
		ss_pw_capture_free(capture);
		return NULL;
	}
	return capture;
}

uint32_t ss_pw_capture_node_id(const ss_pw_capture *capture)
{
	return pw_stream_get_node_id(capture->stream);
}

uint64_t ss_pw_capture_frames(const ss_pw_capture *capture)
{
	return __atomic_load_n(&capture->frames_delivered, __ATOMIC_RELAXED);
}

void ss_pw_capture_free(ss_pw_capture *capture)
{
	if (capture == NULL)
		return;
	capture->has_ended = 1;
	spa_hook_remove(&capture->listener);
	struct ss_pw_connection *connection = capture->connection;
	if (connection->retired_count < SS_PW_RETIRED_MAX) {
		pw_stream_disconnect(capture->stream);
		connection->retired[connection->retired_count++] = capture->stream;
	} else {
		pw_stream_destroy(capture->stream);
	}
	free(capture);
}
