/* The graph node: a pw_filter with 8 outputs and a fixed input port pool, its data thread, its
 * connection's life cycle and reconnection (header: pipewire_graph.h; the figures behind each
 * choice: docs/CAPTURE.md, "The graph path on PipeWire"). The registry's and the core's events:
 * graph_events.c; links and the park sink: graph_links.c; the metadata: graph_metadata.c. */
#define _GNU_SOURCE
#include "graph_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>


void ss_graph_emit(struct ss_pw_graph *g, int event, uint32_t id, const char *detail)
{
	if (g->event != NULL)
		g->event(g->userdata, event, id, detail != NULL ? detail : "");
}

/* ---- The data thread: never allocates, locks, logs or waits. ---- */

void ss_graph_store_latency(struct ss_pw_graph *g, double seconds)
{
	uint64_t bits;
	memcpy(&bits, &seconds, sizeof(bits));
	__atomic_store_n(&g->latency_bits, bits, __ATOMIC_RELAXED);
}

static uint64_t clock_nsec(clockid_t clock)
{
	struct timespec now;
	clock_gettime(clock, &now);
	return (uint64_t)now.tv_sec * 1000000000u + (uint64_t)now.tv_nsec;
}

/* The time the data thread has spent runnable but waiting for a CPU (the second figure of its
 * schedstat), in ns; 0 where the kernel keeps none. One pread of a file opened at the first
 * cycle: a system call that neither sleeps nor locks in user space. */
static uint64_t run_queue_wait_nsec(int schedstat_fd)
{
	char text[80];
	ssize_t n = schedstat_fd >= 0 ? pread(schedstat_fd, text, sizeof(text) - 1, 0) : -1;
	if (n <= 0)
		return 0;
	text[n] = '\0';
	const char *c = text;
	while (*c >= '0' && *c <= '9')
		c++;
	while (*c == ' ')
		c++;
	uint64_t value = 0;
	for (; *c >= '0' && *c <= '9'; c++)
		value = value * 10 + (uint64_t)(*c - '0');
	return value;
}

/* What a process call starts from: the clocks, the data thread's context switches so far (one
 * getrusage per cycle: a system call that neither sleeps nor locks in user space) and its
 * time waiting for a CPU. */
struct call_start {
	uint64_t wall_nsec, cpu_nsec, run_queue_wait_nsec;
	long voluntary_switches, involuntary_switches;
};

static struct call_start call_start_now(int schedstat_fd)
{
	struct rusage usage;
	getrusage(RUSAGE_THREAD, &usage);
	return (struct call_start){ clock_nsec(CLOCK_MONOTONIC), clock_nsec(CLOCK_THREAD_CPUTIME_ID),
		run_queue_wait_nsec(schedstat_fd), usage.ru_nvcsw, usage.ru_nivcsw };
}

/* After each process call: the CPU time it took (the longest kept, and whether it took longer
 * than the quantum lasts: late by our own fault), and whether the sink played a quantum without
 * us — our call lasted longer than the quantum (the driver's next cycle began before we were
 * done), or the driver's position moved on by more than a cycle since our last call
 * (it ran a cycle without us; not across a change of our output links — made, unmade, or made
 * active by the server: a rest, short or long, with a call or two as the links go — nor after a
 * pause of half a second or more). By the position, not by the wall clock: as our links are
 * made after a rest the whole graph may stop for ~43 ms (0.3.65's null sink; the driver's
 * position moves one cycle). Counted, either showed up as an underrun in `status` at every wake.
 * A late call's record says too whether the thread gave its CPU up during it (it waited: never
 * the render's way) or had it taken (preempted: the machine's doing), and how long since the
 * call before it was runnable but waiting for a CPU: a thread woken for the cycle it missed
 * waited most of a quantum; one the driver never woke for it (the driver itself a cycle late,
 * its catch-up cycle following at once) waited no more than its wake-ups take. */
static void note_process_time(struct ss_pw_graph *g, const struct spa_io_clock *clock,
		const struct call_start *start, uint32_t live)
{
	uint64_t began = start->wall_nsec;
	uint64_t ended = clock_nsec(CLOCK_MONOTONIC), took = clock_nsec(CLOCK_THREAD_CPUTIME_ID) - start->cpu_nsec;
	if (took > __atomic_load_n(&g->slowest_process_nsec, __ATOMIC_RELAXED)) {
		__atomic_store_n(&g->slowest_process_nsec, took, __ATOMIC_RELAXED);
		__atomic_store_n(&g->slowest_process_end_nsec, ended, __ATOMIC_RELAXED);
	}
	uint32_t rate = clock->rate.denom;
	uint64_t previous = g->last_process_start_nsec, driver_moved = clock->position - g->last_process_position;
	uint64_t link_changes = __atomic_load_n(&g->output_link_changes, __ATOMIC_ACQUIRE);
	/* Our links as the loop thread heard of them, and as this thread found their buffers (either
	 * may learn of the server's activation first). */
	int same_links = link_changes == g->last_process_link_changes && live == g->last_process_live;
	g->last_process_live = live;
	int same_driver = clock->id == g->last_process_clock_id, previous_frames = g->last_process_frames;
	int64_t behind = (int64_t)(began - clock->nsec), previous_behind = g->last_process_behind_nsec;
	g->last_process_behind_nsec = behind;
	uint64_t previous_run_queue_wait = g->last_process_run_queue_wait_nsec;
	g->last_process_run_queue_wait_nsec = start->run_queue_wait_nsec;
	g->last_process_link_changes = link_changes;
	g->last_process_start_nsec = began;
	g->last_process_position = clock->position;
	g->last_process_clock_id = clock->id;
	g->last_process_frames = (int)clock->duration;
	if (rate == 0)
		return;
	uint64_t quantum = clock->duration * 1000000000u / rate, since = began - previous;
	if (took > quantum)
		__atomic_add_fetch(&g->overloaded_cycles, 1, __ATOMIC_RELAXED);
	/* (A call that outlasted its quantum also delays the next one's start: counted once.) */
	/* The driver's position moves on by each cycle's own quantum: more than both this one's and
	 * the one before's, a cycle went by without us (not a change of quantum). */
	uint64_t one_cycle = clock->duration > (uint64_t)previous_frames ? clock->duration : (uint64_t)previous_frames;
	int outlasted = ended - began > quantum, lost_between = previous != 0 && same_driver && same_links
		&& driver_moved > one_cycle && since < 500000000u && !g->last_process_outlasted;
	g->last_process_outlasted = outlasted;
	ss_graph_quantum_note(g, outlasted || lost_between, took > quantum, behind, clock->duration, rate, ended);
	if (outlasted || lost_between) {
		uint64_t n = __atomic_load_n(&g->late_cycles, __ATOMIC_RELAXED);
		struct ss_pw_graph_late_cycle *record = &g->late_record[n % SS_PW_GRAPH_LATE_RECORD];
		/* Plain stores, published by the count's release: a reader copies a record and checks
		 * the count again (the record is overwritten only SS_PW_GRAPH_LATE_RECORD cycles on). */
		record->ended_seconds = (double)ended * 1e-9;
		record->process_seconds = (double)(ended - began) * 1e-9;
		record->process_cpu_seconds = (double)took * 1e-9;
		record->since_previous_seconds = previous != 0 ? (double)since * 1e-9 : 0;
		record->quantum_seconds = (double)quantum * 1e-9;
		record->driver_step_seconds = previous != 0 && same_driver ? (double)driver_moved / rate : 0;
		record->behind_driver_seconds = (double)behind * 1e-9;
		record->previous_behind_driver_seconds = previous != 0 ? (double)previous_behind * 1e-9 : 0;
		/* (A failed read gives 0: no figure rather than a wrapped one.) */
		record->waited_for_cpu_seconds = previous != 0 && g->schedstat_fd >= 0
			&& start->run_queue_wait_nsec >= previous_run_queue_wait
			? (double)(start->run_queue_wait_nsec - previous_run_queue_wait) * 1e-9 : -1;
		struct rusage usage;
		getrusage(RUSAGE_THREAD, &usage);
		record->waits = (uint32_t)(usage.ru_nvcsw - start->voluntary_switches);
		record->preemptions = (uint32_t)(usage.ru_nivcsw - start->involuntary_switches);
		__atomic_store_n(&g->late_cycles, n + 1, __ATOMIC_RELEASE);
	}
}

/* On 0.3.65 a client's data thread stays SCHED_OTHER unless client-rt.conf's module-rt raised
 * it, and under load the graph then waits for it (10-15 gaps per app with two busy loops);
 * where nothing raised it, it raises itself at its first cycle to SCHED_FIFO 20, if permitted.
 * On its own thread, not by an invoke from the thread that starts the node: 0.3.65 runs an
 * invoke in the calling thread itself while the data thread has not yet entered its loop, and
 * a fresh-clone test run lost that race under load: the starting thread stayed real-time and
 * everything it started after, two busy loops included, ran at SCHED_FIFO 20. Either way the
 * thread gets SCHED_RESET_ON_FORK: no thread or process it starts inherits real-time. One
 * system call, at the first cycle only; returns the policy the thread runs with. */
static int raise_data_thread(void)
{
	int policy = sched_getscheduler(0) & ~SCHED_RESET_ON_FORK;
	struct sched_param parameters = { .sched_priority = 20 };
	if (policy == SCHED_FIFO || policy == SCHED_RR)
		sched_getparam(0, &parameters);
	else
		policy = SCHED_FIFO;
	if (sched_setscheduler(0, policy | SCHED_RESET_ON_FORK, &parameters) != 0)
		return sched_getscheduler(0) & ~SCHED_RESET_ON_FORK;
	return policy;
}

static void on_process(void *data, struct spa_io_position *position)
{
	struct ss_pw_graph *g = data;
	if (__atomic_load_n(&g->policy, __ATOMIC_RELAXED) < 0) {
		__atomic_store_n(&g->policy, raise_data_thread(), __ATOMIC_RELAXED);
		/* /proc/thread-self resolves as it is opened: the fd reads this thread's record. */
		g->schedstat_fd = open("/proc/thread-self/schedstat", O_RDONLY | O_CLOEXEC);
	}
	struct call_start start = call_start_now(g->schedstat_fd);
	/* The driver's clock as this cycle began: a long call finds it moved on at its end. */
	struct spa_io_clock clock = position->clock;
	uint32_t frames = position->clock.duration, rate = position->clock.rate.denom;
	for (uint32_t s = 0; s < g->config.input_sets; s++) {
		int in_use = __atomic_load_n(&g->set_in_use[s], __ATOMIC_ACQUIRE);
		for (uint32_t c = 0; c < SS_PW_GRAPH_SET_CHANNELS; c++)
			g->cycle_inputs[s * SS_PW_GRAPH_SET_CHANNELS + c] =
				in_use ? pw_filter_get_dsp_buffer(g->in_ports[s][c], frames) : NULL;
	}
	uint32_t linked = __atomic_load_n(&g->linked_mask, __ATOMIC_ACQUIRE), live = 0;
	uint32_t active = __atomic_load_n(&g->active_outputs, __ATOMIC_ACQUIRE);
	int missing = 0;
	for (int i = 0; i < SS_PW_GRAPH_OUT_CHANNELS; i++) {
		float *out = pw_filter_get_dsp_buffer(g->out_ports[i], frames);
		if (out == NULL && frames > SS_MAX_SCRATCH_FRAMES)
			return;   /* a quantum beyond any PipeWire's maximum: nothing to render into */
		missing |= out == NULL && (linked & (1u << i));
		live |= (uint32_t)(out != NULL && (active & (1u << i))) << i;
		g->cycle_outputs[i] = out != NULL ? out : g->scratch + i * SS_MAX_SCRATCH_FRAMES;
	}
	/* Live only once every output we linked is active: the server sorts the graph anew as each
	 * link becomes active, and the driver may run a cycle without us then, so sound begun on the
	 * first link would be cut by the last one's activation (a default-sink switch on PipeWire:
	 * 0.2-0.4 s into the new sink, a cycle of silence, the tone resuming at once). */
	if ((active & linked) != linked)
		live = 0;
	__atomic_store_n(&g->live_outputs, live, __ATOMIC_RELAXED);
	g->process(g->userdata, g->cycle_inputs, g->config.input_sets, g->cycle_outputs, frames, rate);
	if (missing)
		__atomic_add_fetch(&g->underruns, 1, __ATOMIC_RELAXED);
	if (linked != 0 && rate > 0) {
		/* The driver's delay to the device (negative for playback) and this cycle's quantum:
		 * what we filled is played after the sink's cycle that takes it. */
		int64_t delay = position->clock.delay < 0 ? -position->clock.delay : position->clock.delay;
		ss_graph_store_latency(g, (double)(delay + frames) / rate);
	}
	__atomic_store_n(&g->quantum_frames, frames, __ATOMIC_RELAXED);
	__atomic_store_n(&g->rate_hz, rate, __ATOMIC_RELAXED);
	__atomic_add_fetch(&g->cycles, 1, __ATOMIC_RELAXED);
	note_process_time(g, &clock, &start, live);
}

static void on_filter_state(void *data, enum pw_filter_state old, enum pw_filter_state state, const char *error)
{
	struct ss_pw_graph *g = data;
	(void)old; (void)state; (void)error;
	uint32_t id = pw_filter_get_node_id(g->filter);
	__atomic_store_n(&g->node_id, id == SPA_ID_INVALID ? 0 : id, __ATOMIC_RELAXED);
	ss_graph_update(g);
}

static const struct pw_filter_events filter_events = {
	PW_VERSION_FILTER_EVENTS, .state_changed = on_filter_state, .process = on_process,
};

/* ---- Life cycle. ---- */

ss_pw_graph *ss_pw_graph_new(const struct ss_pw_graph_config *config, ss_pw_graph_process_cb process,
		ss_pw_graph_event_cb event, void *userdata)
{
	if (config->input_sets < 1 || config->input_sets > SS_PW_GRAPH_MAX_SETS || process == NULL)
		return NULL;
	pw_init(NULL, NULL);
	struct ss_pw_graph *g = calloc(1, sizeof(*g));
	if (g == NULL)
		return NULL;
	g->config = *config;
	g->remote = config->remote != NULL ? strdup(config->remote) : NULL;
	g->node_name = strdup(config->node_name != NULL ? config->node_name : "scenesound");
	g->config.application_name = config->application_name != NULL ? strdup(config->application_name) : NULL;
	g->config.icon_name = config->icon_name != NULL ? strdup(config->icon_name) : NULL;
	g->config.description = config->description != NULL ? strdup(config->description) : NULL;
	g->config.media_role = config->media_role != NULL ? strdup(config->media_role) : NULL;
	g->output_mask = 0x3;
	g->retry_delay = config->retry_initial_seconds;
	ss_graph_store_latency(g, -1);
	g->process = process;
	g->event = event;
	g->userdata = userdata;
	g->policy = -1;
	g->schedstat_fd = -1;
	spa_list_init(&g->bindings);
	g->scratch = calloc(SS_PW_GRAPH_OUT_CHANNELS * SS_MAX_SCRATCH_FRAMES, sizeof(float));
	g->loop = pw_thread_loop_new("scenesound-graph", NULL);
	if (g->node_name == NULL || g->scratch == NULL || g->loop == NULL)
		goto fail;
	/* client-rt.conf (0.3.x): its module-rt makes the data thread real-time; later versions
	 * have no such file and do it themselves. */
	g->context = pw_context_new(pw_thread_loop_get_loop(g->loop), pw_properties_new(PW_KEY_CONFIG_NAME, "client-rt.conf", NULL), 0);
	if (g->context == NULL)
		g->context = pw_context_new(pw_thread_loop_get_loop(g->loop), NULL, 0);
	if (g->context == NULL)
		goto fail;
	return g;
fail:
	ss_pw_graph_free(g);
	return NULL;
}

static int connect_node(struct ss_pw_graph *g)
{
	struct pw_properties *props = pw_properties_new(NULL, NULL);
	if (g->remote != NULL)
		pw_properties_set(props, PW_KEY_REMOTE_NAME, g->remote);
	g->core = pw_context_connect(g->context, props, 0);
	if (g->core == NULL)
		return -errno;
	g->disconnected = 0;
	g->announce_link = 1;
	pw_core_add_listener(g->core, &g->core_listener, &ss_graph_core_events, g);
	g->registry = pw_core_get_registry(g->core, PW_VERSION_REGISTRY, 0);
	pw_registry_add_listener(g->registry, &g->registry_listener, &ss_graph_registry_events, g);
	g->registry_synced = 0;
	g->registry_seq = pw_core_sync(g->core, PW_ID_CORE, 0);
	/* No media.class: WirePlumber leaves the node alone; we make every link ourselves. Not
	 * node.always-process: with it, 0.3.65 kept calling process ~187 times a second with every
	 * link of ours gone (the sink suspended all the same); without it, an unlinked node is not
	 * scheduled at all, and a link of ours to the sink or from an app starts it. */
	struct pw_properties *node_props = pw_properties_new(
			PW_KEY_MEDIA_TYPE, "Audio", PW_KEY_MEDIA_CATEGORY, "Filter", PW_KEY_MEDIA_ROLE, "DSP",
			PW_KEY_NODE_NAME, g->node_name, NULL);
	pw_properties_setf(node_props, PW_KEY_NODE_LATENCY, "%u/%u", ss_graph_asked_quantum(g), g->config.rate_hz);
	if (g->config.application_name != NULL) {
		/* Who we are, as pw-dump and pw-top show it. Still no media.class: pipewire-pulse
		 * lists a Stream/Output/Audio only with a node-level Format and volume, which a
		 * pw_filter has not, and WirePlumber would handle it as a stream of its own. */
		pw_properties_set(node_props, PW_KEY_APP_NAME, g->config.application_name);
		pw_properties_setf(node_props, PW_KEY_APP_PROCESS_ID, "%d", (int)getpid());
		if (g->config.icon_name != NULL)
			pw_properties_set(node_props, PW_KEY_APP_ICON_NAME, g->config.icon_name);
		if (g->config.description != NULL) {
			pw_properties_set(node_props, PW_KEY_NODE_DESCRIPTION, g->config.description);
			pw_properties_set(node_props, PW_KEY_MEDIA_NAME, g->config.description);
		}
		if (g->config.media_role != NULL)
			pw_properties_set(node_props, PW_KEY_MEDIA_ROLE, g->config.media_role);
	}
	g->filter = pw_filter_new(g->core, g->node_name, node_props);
	if (g->filter == NULL)
		return -errno;
	pw_filter_add_listener(g->filter, &g->filter_listener, &filter_events, g);
	char name[32];
	for (uint32_t s = 0; s < g->config.input_sets; s++)
		for (int c = 0; c < SS_PW_GRAPH_SET_CHANNELS; c++) {
			snprintf(name, sizeof(name), "in_%u_%s", s, SS_CHANNELS[c]);
			g->in_ports[s][c] = pw_filter_add_port(g->filter, PW_DIRECTION_INPUT, PW_FILTER_PORT_FLAG_MAP_BUFFERS, 0,
					pw_properties_new(PW_KEY_FORMAT_DSP, "32 bit float mono audio", PW_KEY_PORT_NAME, name,
						PW_KEY_AUDIO_CHANNEL, SS_CHANNELS[c], NULL), NULL, 0);
			if (g->in_ports[s][c] == NULL)
				return -ENOMEM;
		}
	for (int c = 0; c < SS_PW_GRAPH_OUT_CHANNELS; c++) {
		snprintf(name, sizeof(name), "out_%s", SS_CHANNELS[c]);
		g->out_ports[c] = pw_filter_add_port(g->filter, PW_DIRECTION_OUTPUT, PW_FILTER_PORT_FLAG_MAP_BUFFERS, 0,
				pw_properties_new(PW_KEY_FORMAT_DSP, "32 bit float mono audio", PW_KEY_PORT_NAME, name,
					PW_KEY_AUDIO_CHANNEL, SS_CHANNELS[c], NULL), NULL, 0);
		if (g->out_ports[c] == NULL)
			return -ENOMEM;
	}
	int result = pw_filter_connect(g->filter, PW_FILTER_FLAG_RT_PROCESS, NULL, 0);
	/* Made again after a reconnection: it went with the old connection. */
	if (result == 0 && g->park_wanted)
		result = ss_graph_make_park_sink(g);
	return result;
}

/* Everything of the connection let go (the node, its links, the park sink, the registry view);
 * what is wanted (outputs, their sink and mask, resting) stays for the next connection. */
static void teardown(struct ss_pw_graph *g)
{
	for (uint32_t s = 0; s < g->config.input_sets; s++)
		ss_graph_free_set(g, s);
	ss_graph_unlink_outputs(g);
	ss_graph_destroy_park_sink(g);
	if (g->filter != NULL)
		pw_filter_destroy(g->filter);
	g->filter = NULL;
	ss_graph_metadata_gone(g);
	if (g->registry != NULL) {
		spa_hook_remove(&g->registry_listener);
		pw_proxy_destroy((struct pw_proxy *)g->registry);
	}
	g->registry = NULL;
	if (g->core != NULL) {
		spa_hook_remove(&g->core_listener);
		pw_core_disconnect(g->core);
	}
	g->core = NULL;
	ss_graph_unbind_streams(g, 0);
	ss_pw_view_clear(&g->view);
	g->default_sink[0] = '\0';
	g->registry_synced = 0;
	__atomic_store_n(&g->node_id, 0, __ATOMIC_RELAXED);
	g->ready_reported = 0;
	memset(g->in_ids, 0, sizeof(g->in_ids));
	memset(g->out_ids, 0, sizeof(g->out_ids));
}

void ss_graph_schedule_retry(struct ss_pw_graph *g)
{
	if (!g->started || g->retry_timer == NULL || g->config.retry_initial_seconds <= 0)
		return;
	double delay = g->retry_delay > 0 ? g->retry_delay : g->config.retry_initial_seconds;
	struct timespec value = { .tv_sec = (time_t)delay, .tv_nsec = (long)((delay - (time_t)delay) * 1e9) };
	if (value.tv_sec == 0 && value.tv_nsec == 0)
		value.tv_nsec = 1;
	pw_loop_update_timer(pw_thread_loop_get_loop(g->loop), g->retry_timer, &value, NULL, false);
	g->retry_delay = SPA_MIN(2 * delay, SPA_MAX(g->config.retry_maximum_seconds, g->config.retry_initial_seconds));
}

static void on_retry(void *data, uint64_t expirations)
{
	struct ss_pw_graph *g = data;
	(void)expirations;
	if (!g->started || !g->disconnected)
		return;
	teardown(g);
	char attempt[16];
	snprintf(attempt, sizeof(attempt), "%u", ++g->attempts);
	ss_graph_emit(g, SS_PW_GRAPH_RECONNECTING, 0, attempt);
	if (connect_node(g) < 0) {
		teardown(g);
		ss_graph_lost(g, "cannot reach PipeWire");
	}
}

int ss_pw_graph_start(ss_pw_graph *g)
{
	if (g->started)
		return -EALREADY;
	int result = pw_thread_loop_start(g->loop);
	if (result < 0)
		return result;
	pw_thread_loop_lock(g->loop);
	g->started = 1;
	g->retry_timer = pw_loop_add_timer(pw_thread_loop_get_loop(g->loop), on_retry, g);
	g->reread_timer = pw_loop_add_timer(pw_thread_loop_get_loop(g->loop), ss_graph_on_reread_default, g);
	ss_graph_quantum_start(g);
	result = connect_node(g);
	if (result < 0 && g->config.retry_initial_seconds > 0) {
		/* Not there yet: retried, as a lost connection is. */
		teardown(g);
		ss_graph_lost(g, "cannot reach PipeWire");
		result = 0;
	}
	pw_thread_loop_unlock(g->loop);
	if (result < 0)
		ss_pw_graph_stop(g);
	return result < 0 ? result : 0;
}


void ss_pw_graph_stop(ss_pw_graph *g)
{
	if (g == NULL || g->loop == NULL)
		return;
	pw_thread_loop_lock(g->loop);
	int was_started = g->started;
	g->started = 0;
	if (was_started) {
		ss_graph_clear_targets(g);
		g->outputs_wanted = 0;
		g->park_wanted = 0;
		teardown(g);
		if (g->retry_timer != NULL)
			pw_loop_destroy_source(pw_thread_loop_get_loop(g->loop), g->retry_timer);
		g->retry_timer = NULL;
		if (g->reread_timer != NULL)
			pw_loop_destroy_source(pw_thread_loop_get_loop(g->loop), g->reread_timer);
		g->reread_timer = NULL;
		ss_graph_quantum_stop(g);
		__atomic_store_n(&g->linked_mask, 0, __ATOMIC_RELEASE);
		ss_graph_store_latency(g, -1);
	}
	pw_thread_loop_unlock(g->loop);
	if (was_started)
		pw_thread_loop_stop(g->loop);
}

void ss_pw_graph_free(ss_pw_graph *g)
{
	if (g == NULL)
		return;
	ss_pw_graph_stop(g);
	if (g->context != NULL)
		pw_context_destroy(g->context);
	if (g->loop != NULL)
		pw_thread_loop_destroy(g->loop);
	ss_pw_view_clear(&g->view);
	if (g->schedstat_fd >= 0)
		close(g->schedstat_fd);
	free(g->scratch);
	free(g->remote);
	free(g->node_name);
	free(g->park_properties);
	free((char *)g->config.application_name);
	free((char *)g->config.icon_name);
	free((char *)g->config.description);
	free((char *)g->config.media_role);
	free(g);
}

uint32_t ss_pw_graph_node_id(ss_pw_graph *g) { return __atomic_load_n(&g->node_id, __ATOMIC_RELAXED); }
uint64_t ss_pw_graph_cycles(const ss_pw_graph *g) { return __atomic_load_n(&g->cycles, __ATOMIC_RELAXED); }
uint32_t ss_pw_graph_live_outputs(const ss_pw_graph *g) { return __atomic_load_n(&g->live_outputs, __ATOMIC_RELAXED); }
uint32_t ss_pw_graph_quantum_frames(const ss_pw_graph *g) { return __atomic_load_n(&g->quantum_frames, __ATOMIC_RELAXED); }
uint32_t ss_pw_graph_rate_hz(const ss_pw_graph *g) { return __atomic_load_n(&g->rate_hz, __ATOMIC_RELAXED); }
int ss_pw_graph_data_thread_policy(const ss_pw_graph *g) { return __atomic_load_n(&g->policy, __ATOMIC_RELAXED); }

double ss_pw_graph_output_latency_seconds(const ss_pw_graph *g)
{
	uint64_t bits = __atomic_load_n(&g->latency_bits, __ATOMIC_RELAXED);
	double seconds;
	memcpy(&seconds, &bits, sizeof(seconds));
	return seconds;
}
uint64_t ss_pw_graph_underruns(const ss_pw_graph *g) { return __atomic_load_n(&g->underruns, __ATOMIC_RELAXED); }
uint64_t ss_pw_graph_late_cycles(const ss_pw_graph *g) { return __atomic_load_n(&g->late_cycles, __ATOMIC_ACQUIRE); }
uint64_t ss_pw_graph_overloaded_cycles(const ss_pw_graph *g) { return __atomic_load_n(&g->overloaded_cycles, __ATOMIC_RELAXED); }

uint32_t ss_pw_graph_recent_late_cycles(const ss_pw_graph *g, struct ss_pw_graph_late_cycle *cycles, uint32_t capacity)
{
	uint64_t n = __atomic_load_n(&g->late_cycles, __ATOMIC_ACQUIRE);
	uint32_t count = 0;
	while (count < capacity && count < SS_PW_GRAPH_LATE_RECORD && count < n) {
		cycles[count] = g->late_record[(n - 1 - count) % SS_PW_GRAPH_LATE_RECORD];
		count++;
	}
	/* The data thread writes the slot after the newest counted one (the oldest copied) before it
	 * counts it: the oldest copies are kept only while no write can have reached them. */
	uint64_t written = __atomic_load_n(&g->late_cycles, __ATOMIC_ACQUIRE) - n;
	uint64_t untouched = written + 1 >= SS_PW_GRAPH_LATE_RECORD ? 0 : SS_PW_GRAPH_LATE_RECORD - 1 - written;
	return count < untouched ? count : (uint32_t)untouched;
}

void ss_pw_graph_slowest_process(const ss_pw_graph *g, double *seconds, double *ended_at_seconds)
{
	*seconds = (double)__atomic_load_n(&g->slowest_process_nsec, __ATOMIC_RELAXED) * 1e-9;
	*ended_at_seconds = (double)__atomic_load_n(&g->slowest_process_end_nsec, __ATOMIC_RELAXED) * 1e-9;
}
uint64_t ss_pw_graph_reconnects(const ss_pw_graph *g) { return __atomic_load_n(&g->reconnects, __ATOMIC_RELAXED); }
int ss_pw_graph_is_connected(const ss_pw_graph *g)
{
	return !__atomic_load_n(&g->disconnected, __ATOMIC_RELAXED) && __atomic_load_n(&g->node_id, __ATOMIC_RELAXED) != 0;
}
