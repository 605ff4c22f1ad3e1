#include "pipewire_output.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <pipewire/pipewire.h>
#include <spa/param/audio/format-utils.h>
#include <spa/utils/result.h>

#define SS_PW_BYTES_PER_SAMPLE sizeof(float)

/* What the registry announced: nodes (for the sink names) and links (for the sink we play on). */
struct ss_pw_node {
	uint32_t id;
	int is_sink;
	char *name;
	char *serial;
};

struct ss_pw_link {
	uint32_t id;
	uint32_t output_node;
	uint32_t input_node;
};

struct ss_pw_output {
	/* Configuration (copied). */
	char *remote, *application_name, *icon_name, *node_name, *description, *media_role;
	uint32_t rate_hz, block_frames;
	double retry_initial_seconds, retry_maximum_seconds;
	ss_pw_output_render_cb render;
	ss_pw_output_event_cb event;
	void *userdata;

	struct pw_thread_loop *loop;
	struct pw_context *context;
	struct spa_source *retry_timer;

	/* Loop thread (or under the loop's lock). */
	char *target;
	int stays;
	/* The stream's channels: SPA positions. Changed only while no stream exists, so the data
	 * thread reads them without a lock. */
	uint32_t channels;
	uint32_t positions[SS_PW_OUTPUT_MAX_CHANNELS];
	int active;
	int started;
	struct pw_core *core;
	struct spa_hook core_listener;
	struct pw_registry *registry;
	struct spa_hook registry_listener;
	struct pw_stream *stream;
	struct spa_hook stream_listener;
	int sync_seq;
	int synced;
	int session_failed;
	int session_connected;
	int was_linked;
	int lost_playback;
	int outage_reported;
	unsigned attempts;
	double next_delay_seconds;
	struct ss_pw_node *nodes;
	size_t node_count, node_capacity;
	struct ss_pw_link *links;
	size_t link_count, link_capacity;

	/* Data thread only: the block the engine rendered and how much of it went out already.
	 * Kept across sessions, so frames rendered before a loss are the first the next one plays. */
	float *block;
	uint32_t pending_start;

	/* Written on the data or loop thread, read anywhere. */
	uint64_t latency_bits;
	uint64_t underruns;
	uint64_t reconnects;
	uint32_t quantum_frames;
	int streaming;
	int connected;
};

static void store_latency(struct ss_pw_output *o, double seconds)
{
	uint64_t bits;
	memcpy(&bits, &seconds, sizeof(bits));
	__atomic_store_n(&o->latency_bits, bits, __ATOMIC_RELAXED);
}

static void emit(struct ss_pw_output *o, int event, const char *detail)
{
	if (o->event != NULL)
		o->event(o->userdata, event, detail != NULL ? detail : "");
}

/* ---- The registry's view: sinks by name, and the links from our node. ---- */

static void forget_graph(struct ss_pw_output *o)
{
	for (size_t i = 0; i < o->node_count; i++) {
		free(o->nodes[i].name);
		free(o->nodes[i].serial);
	}
	o->node_count = 0;
	o->link_count = 0;
}

static int grow(void **items, size_t *capacity, size_t count, size_t size)
{
	if (count < *capacity)
		return 0;
	size_t wanted = *capacity == 0 ? 32 : *capacity * 2;
	void *bigger = realloc(*items, wanted * size);
	if (bigger == NULL)
		return -1;
	*items = bigger;
	*capacity = wanted;
	return 0;
}

static void on_registry_global(void *data, uint32_t id, uint32_t permissions, const char *type, uint32_t version,
		const struct spa_dict *props)
{
	struct ss_pw_output *o = data;
	(void)permissions; (void)version;
	if (props == NULL)
		return;
	if (strcmp(type, PW_TYPE_INTERFACE_Node) == 0) {
		if (grow((void **)&o->nodes, &o->node_capacity, o->node_count, sizeof(*o->nodes)) < 0)
			return;
		const char *name = spa_dict_lookup(props, PW_KEY_NODE_NAME);
		const char *media_class = spa_dict_lookup(props, PW_KEY_MEDIA_CLASS);
		const char *serial = spa_dict_lookup(props, PW_KEY_OBJECT_SERIAL);
		struct ss_pw_node *node = &o->nodes[o->node_count++];
		node->id = id;
		node->is_sink = media_class != NULL && strcmp(media_class, "Audio/Sink") == 0;
		node->name = name != NULL ? strdup(name) : NULL;
		node->serial = serial != NULL ? strdup(serial) : NULL;
	} else if (strcmp(type, PW_TYPE_INTERFACE_Link) == 0) {
		const char *output_node = spa_dict_lookup(props, PW_KEY_LINK_OUTPUT_NODE);
		const char *input_node = spa_dict_lookup(props, PW_KEY_LINK_INPUT_NODE);
		if (output_node == NULL || input_node == NULL)
			return;
		if (grow((void **)&o->links, &o->link_capacity, o->link_count, sizeof(*o->links)) < 0)
			return;
		o->links[o->link_count++] = (struct ss_pw_link){
			.id = id, .output_node = (uint32_t)atoi(output_node), .input_node = (uint32_t)atoi(input_node) };
	}
}

static void on_registry_global_remove(void *data, uint32_t id)
{
	struct ss_pw_output *o = data;
	for (size_t i = 0; i < o->node_count; i++) {
		if (o->nodes[i].id == id) {
			free(o->nodes[i].name);
			free(o->nodes[i].serial);
			o->nodes[i] = o->nodes[--o->node_count];
			return;
		}
	}
	for (size_t i = 0; i < o->link_count; i++) {
		if (o->links[i].id == id) {
			o->links[i] = o->links[--o->link_count];
			return;
		}
	}
}

static const struct pw_registry_events registry_events = {
	PW_VERSION_REGISTRY_EVENTS,
	.global = on_registry_global,
	.global_remove = on_registry_global_remove,
};

static const struct ss_pw_node *find_sink(const struct ss_pw_output *o, const char *target)
{
	for (size_t i = 0; i < o->node_count; i++) {
		const struct ss_pw_node *node = &o->nodes[i];
		if (node->is_sink && ((node->name != NULL && strcmp(node->name, target) == 0) ||
		    (node->serial != NULL && strcmp(node->serial, target) == 0)))
			return node;
	}
	return NULL;
}

static const char *linked_sink_name(const struct ss_pw_output *o)
{
	if (o->stream == NULL)
		return NULL;
	uint32_t own = pw_stream_get_node_id(o->stream);
	if (own == SPA_ID_INVALID)
		return NULL;
	for (size_t i = 0; i < o->link_count; i++) {
		if (o->links[i].output_node != own)
			continue;
		for (size_t k = 0; k < o->node_count; k++)
			if (o->nodes[k].id == o->links[i].input_node)
				return o->nodes[k].name;
	}
	return NULL;
}

/* ---- Sessions: one core connection and its stream; thrown away whole when lost. ---- */

static void session_start(struct ss_pw_output *o);

static void session_teardown(struct ss_pw_output *o)
{
	if (o->stream != NULL) {
		spa_hook_remove(&o->stream_listener);
		pw_stream_destroy(o->stream);  /* the data thread is out of its process call afterwards */
		o->stream = NULL;
	}
	if (o->registry != NULL) {
		spa_hook_remove(&o->registry_listener);
		pw_proxy_destroy((struct pw_proxy *)o->registry);
		o->registry = NULL;
	}
	if (o->core != NULL) {
		spa_hook_remove(&o->core_listener);
		pw_core_disconnect(o->core);
		o->core = NULL;
	}
	forget_graph(o);
	o->synced = 0;
	o->session_failed = 0;
	o->session_connected = 0;
	__atomic_store_n(&o->connected, 0, __ATOMIC_RELAXED);
	o->was_linked = 0;
	__atomic_store_n(&o->streaming, 0, __ATOMIC_RELAXED);
	store_latency(o, -1);
}

static void schedule_retry(struct ss_pw_output *o)
{
	double delay = o->next_delay_seconds;
	o->next_delay_seconds = fmin(o->next_delay_seconds * 2, o->retry_maximum_seconds);
	struct timespec value = {
		.tv_sec = (time_t)delay,
		.tv_nsec = (long)((delay - floor(delay)) * 1e9),
	};
	if (value.tv_sec == 0 && value.tv_nsec == 0)
		value.tv_nsec = 1;
	pw_loop_update_timer(pw_thread_loop_get_loop(o->loop), o->retry_timer, &value, NULL, false);
}

/* The session is lost: report it (once per outage), keep still until the retry tears it down
 * (never inside one of its own callbacks). */
static void session_fail(struct ss_pw_output *o, int event, const char *reason)
{
	if (o->session_failed || !o->started)
		return;
	o->session_failed = 1;
	if (o->session_connected)
		o->lost_playback = 1;
	__atomic_store_n(&o->streaming, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&o->connected, 0, __ATOMIC_RELAXED);
	store_latency(o, -1);
	if (!o->outage_reported) {
		o->outage_reported = 1;
		emit(o, event, reason);
	}
	schedule_retry(o);
}

static void on_retry_timer(void *data, uint64_t expirations)
{
	struct ss_pw_output *o = data;
	(void)expirations;
	if (!o->started)
		return;
	session_teardown(o);
	char attempt[16];
	snprintf(attempt, sizeof(attempt), "%u", ++o->attempts);
	emit(o, SS_PW_OUTPUT_RECONNECTING, attempt);
	session_start(o);
}

static void fill(struct ss_pw_output *o, uint8_t *destination, uint32_t frames)
{
	size_t bytes_per_frame = o->channels * SS_PW_BYTES_PER_SAMPLE;
	uint32_t written = 0;
	while (written < frames) {
		if (o->pending_start == o->block_frames) {
			o->render(o->userdata, o->block, o->block_frames, o->channels);
			o->pending_start = 0;
		}
		uint32_t count = SPA_MIN(o->block_frames - o->pending_start, frames - written);
		memcpy(destination + (size_t)written * bytes_per_frame,
		       o->block + (size_t)o->pending_start * o->channels, (size_t)count * bytes_per_frame);
		o->pending_start += count;
		written += count;
	}
}

/* On libpipewire's data thread, once per graph cycle: no allocation, lock, log or wait. */
static void on_process(void *data)
{
	struct ss_pw_output *o = data;
	struct pw_stream *stream = o->stream;
	struct pw_buffer *buffer = pw_stream_dequeue_buffer(stream);
	if (buffer == NULL) {
		__atomic_add_fetch(&o->underruns, 1, __ATOMIC_RELAXED);
		return;
	}
	struct spa_data *d = &buffer->buffer->datas[0];
	if (d->data == NULL || d->chunk == NULL) {
		pw_stream_queue_buffer(stream, buffer);
		return;
	}
	uint32_t bytes_per_frame = o->channels * SS_PW_BYTES_PER_SAMPLE;
	uint32_t capacity = d->maxsize / bytes_per_frame;
	uint32_t frames = buffer->requested > 0 ? (uint32_t)SPA_MIN(buffer->requested, (uint64_t)capacity)
	                                        : SPA_MIN(o->block_frames, capacity);
	fill(o, d->data, frames);
	d->chunk->offset = 0;
	d->chunk->stride = bytes_per_frame;
	d->chunk->size = frames * bytes_per_frame;
	buffer->size = frames;
	pw_stream_queue_buffer(stream, buffer);
	__atomic_store_n(&o->quantum_frames, frames, __ATOMIC_RELAXED);

	struct pw_time time;
	if (pw_stream_get_time_n(stream, &time, sizeof(time)) == 0 && time.rate.denom > 0) {
		/* delay: from the graph to the device; buffered: the resampler; queued: what we
		 * queued and the graph has not taken (this cycle's buffer included); pending: rendered,
		 * not handed over yet. */
		double seconds = (double)time.delay * time.rate.num / time.rate.denom
			+ (double)(time.buffered + time.queued + (o->block_frames - o->pending_start)) / o->rate_hz;
		store_latency(o, seconds);
	}
}

/* The session's stream is linked: the first time, that is a connection (after a loss, a
 * reconnection). */
static void mark_connected(struct ss_pw_output *o)
{
	if (o->session_connected)
		return;
	o->session_connected = 1;
	__atomic_store_n(&o->connected, 1, __ATOMIC_RELAXED);
	if (o->lost_playback)
		__atomic_add_fetch(&o->reconnects, 1, __ATOMIC_RELAXED);
	o->lost_playback = 0;
	o->outage_reported = 0;
	o->attempts = 0;
	o->next_delay_seconds = o->retry_initial_seconds;
	const char *sink = linked_sink_name(o);
	emit(o, SS_PW_OUTPUT_CONNECTED, sink != NULL ? sink : (o->target != NULL ? o->target : ""));
}

static void on_stream_state(void *data, enum pw_stream_state old, enum pw_stream_state state, const char *error)
{
	struct ss_pw_output *o = data;
	(void)old;
	if (o->session_failed)
		return;
	switch (state) {
	case PW_STREAM_STATE_STREAMING:
		o->was_linked = 1;
		__atomic_store_n(&o->streaming, 1, __ATOMIC_RELAXED);
		mark_connected(o);
		break;
	case PW_STREAM_STATE_PAUSED:
		/* Linked and not scheduled: inactive, or about to start. */
		o->was_linked = 1;
		__atomic_store_n(&o->streaming, 0, __ATOMIC_RELAXED);
		store_latency(o, -1);
		if (!o->active)
			mark_connected(o);
		break;
	case PW_STREAM_STATE_ERROR: {
		char reason[256];
		snprintf(reason, sizeof(reason), "PipeWire stream failed: %s", error != NULL ? error : "unknown error");
		session_fail(o, SS_PW_OUTPUT_DISCONNECTED, reason);
		break;
	}
	case PW_STREAM_STATE_UNCONNECTED:
		/* Unlinked after having been linked: its sink went away (a stream that stays on its
		 * sink is not moved elsewhere by the session manager). */
		if (o->was_linked)
			session_fail(o, SS_PW_OUTPUT_DISCONNECTED, "the PipeWire sink went away");
		break;
	default:
		break;
	}
}

static const struct pw_stream_events stream_events = {
	PW_VERSION_STREAM_EVENTS,
	.state_changed = on_stream_state,
	.process = on_process,
};

static void stream_open(struct ss_pw_output *o)
{
	char latency[32], rate[32], pid[32];
	snprintf(latency, sizeof(latency), "%u/%u", o->block_frames, o->rate_hz);
	snprintf(rate, sizeof(rate), "1/%u", o->rate_hz);
	snprintf(pid, sizeof(pid), "%d", (int)getpid());
	struct pw_properties *properties = pw_properties_new(
			PW_KEY_MEDIA_TYPE, "Audio",
			PW_KEY_MEDIA_CATEGORY, "Playback",
			PW_KEY_MEDIA_CLASS, "Stream/Output/Audio",
			PW_KEY_MEDIA_ROLE, o->media_role,
			PW_KEY_MEDIA_NAME, o->description,
			PW_KEY_NODE_NAME, o->node_name,
			PW_KEY_NODE_DESCRIPTION, o->description,
			PW_KEY_NODE_LATENCY, latency,
			PW_KEY_NODE_RATE, rate,
			PW_KEY_APP_NAME, o->application_name,
			PW_KEY_APP_ICON_NAME, o->icon_name,
			/* The app capture leaves its own process's streams alone. */
			PW_KEY_APP_PROCESS_ID, pid,
			NULL);
	if (properties == NULL)
		return session_fail(o, SS_PW_OUTPUT_DISCONNECTED, "cannot create a PipeWire stream: out of memory");
	if (o->target != NULL)
		pw_properties_set(properties, PW_KEY_TARGET_OBJECT, o->target);
	if (o->stays)
		pw_properties_set(properties, PW_KEY_NODE_DONT_RECONNECT, "true");
	o->stream = pw_stream_new(o->core, o->description, properties);
	if (o->stream == NULL)
		return session_fail(o, SS_PW_OUTPUT_DISCONNECTED, "cannot create a PipeWire stream");
	pw_stream_add_listener(o->stream, &o->stream_listener, &stream_events, o);

	uint8_t pod_buffer[1024];
	struct spa_pod_builder builder = SPA_POD_BUILDER_INIT(pod_buffer, sizeof(pod_buffer));
	struct spa_audio_info_raw format = {
		.format = SPA_AUDIO_FORMAT_F32,
		.rate = o->rate_hz,
		.channels = o->channels,
	};
	memcpy(format.position, o->positions, o->channels * sizeof(o->positions[0]));
	const struct spa_pod *params[1];
	params[0] = spa_format_audio_raw_build(&builder, SPA_PARAM_EnumFormat, &format);
	enum pw_stream_flags flags = PW_STREAM_FLAG_AUTOCONNECT | PW_STREAM_FLAG_MAP_BUFFERS | PW_STREAM_FLAG_RT_PROCESS;
	if (o->stays)
		flags |= PW_STREAM_FLAG_DONT_RECONNECT;
	if (!o->active)
		flags |= PW_STREAM_FLAG_INACTIVE;
	int result = pw_stream_connect(o->stream, PW_DIRECTION_OUTPUT, PW_ID_ANY, flags, params, 1);
	if (result < 0) {
		char reason[256];
		snprintf(reason, sizeof(reason), "cannot connect the PipeWire stream: %s", spa_strerror(result));
		session_fail(o, SS_PW_OUTPUT_DISCONNECTED, reason);
	}
}

static void report_target_not_found(struct ss_pw_output *o)
{
	char message[1024];
	int length = snprintf(message, sizeof(message), "PipeWire sink \"%s\" not found; available sinks: ", o->target);
	int any = 0;
	for (size_t i = 0; i < o->node_count && length > 0 && (size_t)length < sizeof(message); i++) {
		if (!o->nodes[i].is_sink || o->nodes[i].name == NULL)
			continue;
		length += snprintf(message + length, sizeof(message) - (size_t)length, "%s%s", any ? ", " : "", o->nodes[i].name);
		any = 1;
	}
	if (!any && length > 0 && (size_t)length < sizeof(message))
		snprintf(message + length, sizeof(message) - (size_t)length, "none");
	session_fail(o, SS_PW_OUTPUT_FAILED, message);
}

static void on_core_done(void *data, uint32_t id, int seq)
{
	struct ss_pw_output *o = data;
	if (id != PW_ID_CORE || seq != o->sync_seq || o->synced || o->session_failed)
		return;
	/* The registry has announced what existed: a named sink can be checked now. */
	o->synced = 1;
	if (o->target != NULL && find_sink(o, o->target) == NULL)
		return report_target_not_found(o);
	stream_open(o);
}

static void on_core_error(void *data, uint32_t id, int seq, int res, const char *message)
{
	struct ss_pw_output *o = data;
	(void)seq;
	/* Errors about other objects are the stream's business (its state says so). */
	if (id == PW_ID_CORE && res == -EPIPE) {
		char reason[256];
		snprintf(reason, sizeof(reason), "PipeWire went away (%s)", message != NULL ? message : "connection closed");
		session_fail(o, SS_PW_OUTPUT_DISCONNECTED, reason);
	}
}

static const struct pw_core_events core_events = {
	PW_VERSION_CORE_EVENTS,
	.done = on_core_done,
	.error = on_core_error,
};

static void session_start(struct ss_pw_output *o)
{
	struct pw_properties *properties = pw_properties_new(PW_KEY_APP_NAME, o->application_name, NULL);
	if (properties != NULL && o->remote != NULL)
		pw_properties_set(properties, PW_KEY_REMOTE_NAME, o->remote);
	o->core = pw_context_connect(o->context, properties, 0);
	if (o->core == NULL) {
		char reason[256];
		snprintf(reason, sizeof(reason), "cannot connect to PipeWire%s%s: %s",
		         o->remote != NULL ? " at " : "", o->remote != NULL ? o->remote : "", strerror(errno));
		return session_fail(o, SS_PW_OUTPUT_DISCONNECTED, reason);
	}
	pw_core_add_listener(o->core, &o->core_listener, &core_events, o);
	o->registry = pw_core_get_registry(o->core, PW_VERSION_REGISTRY, 0);
	if (o->registry != NULL)
		pw_registry_add_listener(o->registry, &o->registry_listener, &registry_events, o);
	o->sync_seq = pw_core_sync(o->core, PW_ID_CORE, 0);
}

/* ---- The public face. ---- */

static pthread_once_t pipewire_initialized = PTHREAD_ONCE_INIT;
static void initialize_pipewire(void) { pw_init(NULL, NULL); }

static char *copy(const char *text, const char *fallback)
{
	return strdup(text != NULL ? text : fallback);
}

ss_pw_output *ss_pw_output_new(const struct ss_pw_output_config *config,
                               ss_pw_output_render_cb render, ss_pw_output_event_cb event, void *userdata)
{
	pthread_once(&pipewire_initialized, initialize_pipewire);
	if (config->rate_hz == 0 || config->block_frames == 0)
		return NULL;
	struct ss_pw_output *o = calloc(1, sizeof(*o));
	if (o == NULL)
		return NULL;
	o->remote = config->remote != NULL ? strdup(config->remote) : NULL;
	o->application_name = copy(config->application_name, "SceneSound");
	o->icon_name = copy(config->icon_name, "audio-headphones");
	o->node_name = copy(config->node_name, "scenesound");
	o->description = copy(config->description, "SceneSound spatial mix");
	o->media_role = copy(config->media_role, "Production");
	o->rate_hz = config->rate_hz;
	o->block_frames = config->block_frames;
	o->retry_initial_seconds = config->retry_initial_seconds > 0 ? config->retry_initial_seconds : 0.05;
	o->retry_maximum_seconds = fmax(config->retry_maximum_seconds, o->retry_initial_seconds);
	o->next_delay_seconds = o->retry_initial_seconds;
	o->render = render;
	o->event = event;
	o->userdata = userdata;
	o->active = 1;
	o->channels = 2;
	o->positions[0] = SPA_AUDIO_CHANNEL_FL;
	o->positions[1] = SPA_AUDIO_CHANNEL_FR;
	o->block = calloc((size_t)config->block_frames * SS_PW_OUTPUT_MAX_CHANNELS, sizeof(float));
	o->pending_start = config->block_frames;
	store_latency(o, -1);
	if (o->block == NULL || o->application_name == NULL || o->icon_name == NULL || o->node_name == NULL ||
	    o->description == NULL || o->media_role == NULL)
		goto fail;
	o->loop = pw_thread_loop_new("scenesound-pw", NULL);
	if (o->loop == NULL)
		goto fail;
	o->context = pw_context_new(pw_thread_loop_get_loop(o->loop),
			pw_properties_new(PW_KEY_APP_NAME, o->application_name, NULL), 0);
	if (o->context == NULL)
		goto fail;
	o->retry_timer = pw_loop_add_timer(pw_thread_loop_get_loop(o->loop), on_retry_timer, o);
	if (o->retry_timer == NULL)
		goto fail;
	return o;
fail:
	ss_pw_output_free(o);
	return NULL;
}

int ss_pw_output_start(ss_pw_output *o)
{
	if (o->started)
		return -EALREADY;
	int result = pw_thread_loop_start(o->loop);
	if (result < 0)
		return result;
	pw_thread_loop_lock(o->loop);
	o->started = 1;
	session_start(o);
	pw_thread_loop_unlock(o->loop);
	return 0;
}

void ss_pw_output_stop(ss_pw_output *o)
{
	if (o == NULL || o->loop == NULL)
		return;
	pw_thread_loop_lock(o->loop);
	int was_started = o->started;
	o->started = 0;
	if (was_started) {
		pw_loop_update_timer(pw_thread_loop_get_loop(o->loop), o->retry_timer, NULL, NULL, false);
		session_teardown(o);
	}
	pw_thread_loop_unlock(o->loop);
	if (was_started)
		pw_thread_loop_stop(o->loop);
}

void ss_pw_output_free(ss_pw_output *o)
{
	if (o == NULL)
		return;
	ss_pw_output_stop(o);
	if (o->retry_timer != NULL)
		pw_loop_destroy_source(pw_thread_loop_get_loop(o->loop), o->retry_timer);
	if (o->context != NULL)
		pw_context_destroy(o->context);
	if (o->loop != NULL)
		pw_thread_loop_destroy(o->loop);
	forget_graph(o);
	free(o->nodes);
	free(o->links);
	free(o->block);
	free(o->target);
	free(o->remote);
	free(o->application_name);
	free(o->icon_name);
	free(o->node_name);
	free(o->description);
	free(o->media_role);
	free(o);
}

/* Ends the session for a new one made at once (session_start_now), under the loop's lock: not
 * a loss (no event, no reconnection counted). The data thread is out of the stream afterwards. */
static void session_end_for_restart(struct ss_pw_output *o)
{
	pw_loop_update_timer(pw_thread_loop_get_loop(o->loop), o->retry_timer, NULL, NULL, false);
	int lost = o->lost_playback;
	session_teardown(o);
	o->lost_playback = lost;
}

static void session_start_now(struct ss_pw_output *o)
{
	o->next_delay_seconds = o->retry_initial_seconds;
	session_start(o);
}

int ss_pw_output_set_channels(ss_pw_output *o, uint32_t count, const uint32_t *speakers)
{
	static const uint32_t spa_positions[SS_PW_OUTPUT_MAX_CHANNELS] = {
		SPA_AUDIO_CHANNEL_FL, SPA_AUDIO_CHANNEL_FR, SPA_AUDIO_CHANNEL_FC, SPA_AUDIO_CHANNEL_LFE,
		SPA_AUDIO_CHANNEL_RL, SPA_AUDIO_CHANNEL_RR, SPA_AUDIO_CHANNEL_SL, SPA_AUDIO_CHANNEL_SR,
	};
	uint32_t positions[SS_PW_OUTPUT_MAX_CHANNELS];
	if (count == 0 || count > SS_PW_OUTPUT_MAX_CHANNELS)
		return -EINVAL;
	for (uint32_t i = 0; i < count; i++) {
		if (speakers[i] >= SS_PW_OUTPUT_MAX_CHANNELS)
			return -EINVAL;
		positions[i] = spa_positions[speakers[i]];
	}
	pw_thread_loop_lock(o->loop);
	if (count != o->channels || memcmp(positions, o->positions, count * sizeof(positions[0])) != 0) {
		/* The stream goes first, so the data thread is out of it while the channels change. */
		if (o->started)
			session_end_for_restart(o);
		o->channels = count;
		memcpy(o->positions, positions, count * sizeof(positions[0]));
		o->pending_start = o->block_frames;  /* rendered for the old channels */
		if (o->started)
			session_start_now(o);
	}
	pw_thread_loop_unlock(o->loop);
	return 0;
}

void ss_pw_output_set_target(ss_pw_output *o, const char *target, int stays)
{
	pw_thread_loop_lock(o->loop);
	int same_target = (target == NULL && o->target == NULL) ||
		(target != NULL && o->target != NULL && strcmp(target, o->target) == 0);
	if (!same_target || (stays != 0) != (o->stays != 0)) {
		char *copied = target != NULL ? strdup(target) : NULL;
		if (target == NULL || copied != NULL) {
			free(o->target);
			o->target = copied;
			o->stays = stays != 0;
			if (o->started) {
				session_end_for_restart(o);
				session_start_now(o);
			}
		}
	}
	pw_thread_loop_unlock(o->loop);
}

void ss_pw_output_set_active(ss_pw_output *o, int active)
{
	pw_thread_loop_lock(o->loop);
	o->active = active != 0;
	if (o->stream != NULL && !o->session_failed)
		pw_stream_set_active(o->stream, o->active);
	pw_thread_loop_unlock(o->loop);
}

double ss_pw_output_latency_seconds(const ss_pw_output *o)
{
	uint64_t bits = __atomic_load_n(&o->latency_bits, __ATOMIC_RELAXED);
	double seconds;
	memcpy(&seconds, &bits, sizeof(seconds));
	return seconds;
}

uint64_t ss_pw_output_underruns(const ss_pw_output *o) { return __atomic_load_n(&o->underruns, __ATOMIC_RELAXED); }
uint64_t ss_pw_output_reconnects(const ss_pw_output *o) { return __atomic_load_n(&o->reconnects, __ATOMIC_RELAXED); }
int ss_pw_output_is_streaming(const ss_pw_output *o) { return __atomic_load_n(&o->streaming, __ATOMIC_RELAXED); }
int ss_pw_output_is_connected(const ss_pw_output *o) { return __atomic_load_n(&o->connected, __ATOMIC_RELAXED); }
uint32_t ss_pw_output_quantum_frames(const ss_pw_output *o) { return __atomic_load_n(&o->quantum_frames, __ATOMIC_RELAXED); }

void ss_pw_output_sink_name(ss_pw_output *o, char *buffer, uint32_t size)
{
	if (size == 0)
		return;
	buffer[0] = '\0';
	pw_thread_loop_lock(o->loop);
	const char *name = linked_sink_name(o);
	if (name != NULL)
		snprintf(buffer, size, "%s", name);
	pw_thread_loop_unlock(o->loop);
}
