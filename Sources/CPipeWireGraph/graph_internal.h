/* Shared between the files of CPipeWireGraph; not part of its interface. */
#ifndef SCENESOUND_PIPEWIRE_GRAPH_INTERNAL_H
#define SCENESOUND_PIPEWIRE_GRAPH_INTERNAL_H

#include "pipewire_graph.h"

#include <pipewire/pipewire.h>
#include <pipewire/filter.h>
#include <pipewire/extensions/metadata.h>
#include <spa/param/audio/format-utils.h>

#define SS_MAX_SCRATCH_FRAMES 8192
#define SS_OUT_LINKS 16

/* A stream node bound for its info: application.process.id is not in the registry's global. */
struct ss_node_binding {
	struct spa_list link;
	struct ss_pw_graph *graph;
	uint32_t id;
	struct pw_proxy *proxy;
	struct spa_hook listener;
};

struct ss_pw_graph {
	struct ss_pw_graph_config config;
	char *remote, *node_name;
	ss_pw_graph_process_cb process;
	ss_pw_graph_event_cb event;
	void *userdata;

	struct pw_thread_loop *loop;
	struct pw_context *context;
	struct pw_core *core;
	struct spa_hook core_listener;
	struct pw_registry *registry;
	struct spa_hook registry_listener;
	struct pw_filter *filter;
	struct spa_hook filter_listener;
	struct pw_metadata *metadata;   /* the "default" metadata, bound while it exists */
	struct spa_hook metadata_listener;
	uint32_t metadata_id;
	/* A binding replaced by a fresh one (the default read again), let go once the server has
	 * answered the sync that follows the new one (reread_seq): see graph_metadata.c. */
	struct pw_metadata *metadata_old;
	struct spa_hook metadata_old_listener;
	int reread_seq;
	struct ss_pw_view view;
	struct spa_list bindings;
	int started, disconnected, ready_reported, sync_seq, synced;

	/* The port pool (made before connecting) and their global ids once announced. */
	void *in_ports[SS_PW_GRAPH_MAX_SETS][SS_PW_GRAPH_SET_CHANNELS];
	void *out_ports[SS_PW_GRAPH_OUT_CHANNELS];
	uint32_t in_ids[SS_PW_GRAPH_MAX_SETS][SS_PW_GRAPH_SET_CHANNELS];
	uint32_t out_ids[SS_PW_GRAPH_OUT_CHANNELS];
	uint32_t set_app[SS_PW_GRAPH_MAX_SETS];
	uint32_t set_mask[SS_PW_GRAPH_MAX_SETS];
	struct pw_proxy *set_links[SS_PW_GRAPH_MAX_SETS][2 * SS_PW_GRAPH_SET_CHANNELS];

	/* Outputs: wanted (follow_default or sink_name), which of the 8 (output_mask), whether
	 * resting (wanted but unlinked so the sink may suspend), and the links made. */
	int outputs_wanted, follow_default, resting, failure_reported, announce_link;
	uint32_t output_mask;
	char sink_name[SS_PW_GRAPH_TEXT], default_sink[SS_PW_GRAPH_TEXT], linked_sink_name[SS_PW_GRAPH_TEXT];
	uint32_t linked_sink;
	struct pw_proxy *out_links[SS_OUT_LINKS];
	uint32_t out_link_port[SS_OUT_LINKS], out_link_channel[SS_OUT_LINKS], out_link_count;

	/* Reconnection: a timer on the loop, its next delay, the attempts since the loss. */
	struct spa_source *retry_timer;
	double retry_delay;
	/* The default read again (graph_metadata.c): a timer on the loop, its next delay, when it is due. */
	struct spa_source *reread_timer;
	double reread_delay;
	double reread_due;   /* CLOCK_MONOTONIC seconds the timer is set for; not set when past */
	uint32_t attempts;
	int outage, ever_linked, registry_synced, registry_seq;

	struct pw_stream *park_sink;
	int park_wanted;            /* made again after a reconnection */
	char park_name[SS_PW_GRAPH_TEXT];
	char *park_properties;      /* SPA-JSON object of the park sink's extra properties, or NULL */
	uint32_t park_id;
	uint32_t targeted[256];   /* app nodes whose metadata targets we wrote */
	/* Every target.object / target.node in the `default` metadata, ours or not, as announced. */
	struct ss_seen_target { uint32_t subject; int is_object; char value[32]; } seen_targets[256];
	uint32_t seen_target_count;
	uint32_t targeted_count;

	/* The data thread's: pointer tables filled every cycle, scratch outputs. */
	const float *cycle_inputs[SS_PW_GRAPH_MAX_SETS * SS_PW_GRAPH_SET_CHANNELS];
	float *cycle_outputs[SS_PW_GRAPH_OUT_CHANNELS];
	float *scratch;
	/* Written on the data or loop thread, read anywhere. */
	int set_in_use[SS_PW_GRAPH_MAX_SETS];
	uint32_t node_id;
	uint64_t cycles;
	uint32_t quantum_frames, rate_hz;
	int policy;
	int schedstat_fd;           /* the data thread's /proc schedstat, opened at its first cycle */
	uint32_t linked_mask;       /* our outputs linked to the sink, bit per channel */
	uint32_t active_outputs;    /* loop thread: outputs whose link the server says is active */
	uint32_t live_outputs;      /* data thread: outputs with a buffer and an active link this cycle */
	uint64_t latency_bits;      /* a double, -1 while not linked */
	uint64_t underruns, reconnects;
	/* Cycles our process ended after the driver's next cycle was due (the sink played without
	 * us), the last SS_PW_GRAPH_LATE_RECORD of them (when each ended, how long it and its CPU
	 * time took, how long after the call before it began), and the longest process call
	 * (thread CPU ns) and when it ended; calls that took more CPU time than their quantum lasts. */
	uint64_t late_cycles, overloaded_cycles;
	uint64_t last_process_start_nsec;   /* the data thread's own, */
	uint64_t last_process_position;     /* the driver's position, clock and quantum then, */
	uint32_t last_process_clock_id;
	int last_process_frames;
	int64_t last_process_behind_nsec;   /* its start after the driver's cycle was due, */
	uint64_t last_process_run_queue_wait_nsec;  /* the thread's time waiting for a CPU then, */
	uint64_t last_process_link_changes;
	uint32_t last_process_live;
	uint64_t output_link_changes;       /* our output links made, unmade or activated (loop thread) */
	int last_process_outlasted;         /* as this */
	struct ss_pw_graph_late_cycle late_record[SS_PW_GRAPH_LATE_RECORD];  /* written by the data thread */
	uint64_t slowest_process_nsec, slowest_process_end_nsec;
	/* graph_quantum.c: the quantum asked now (0: the configured one), how often it was raised,
	 * the last cycle the next smaller one would have nearly missed (CLOCK_MONOTONIC ns); the
	 * data thread's signal to raise it (one pending at a time; whether a cycle was missed or
	 * only nearly) and the loop's timer to lower it. */
	uint32_t asked_quantum;
	uint64_t quantum_raises, last_near_miss_nsec;
	/* loop thread: when the (near) miss behind each of the latest raises ended, by raise number */
	uint64_t raise_cause_nsec[SS_PW_GRAPH_RAISE_RECORD];
	uint64_t last_miss_nsec;            /* data thread: the miss signalled, */
	int64_t signalled_behind_nsec;      /* its call's start after its cycle was due */
	uint64_t last_graph_change_nsec;    /* loop thread: a node or link came or went, the quantum changed */
	int raise_signalled, miss_since_signal;
	struct spa_source *quantum_event, *quantum_timer, *quantum_judge_timer;
};

/* graph_view.c: stream nodes bound for their info (their process id); unbound one, or all (0). */
void ss_graph_bind_stream(struct ss_pw_graph *g, uint32_t id);
void ss_graph_unbind_streams(struct ss_pw_graph *g, uint32_t id);

static const char *const SS_CHANNELS[SS_PW_GRAPH_SET_CHANNELS] = { "FL", "FR", "FC", "LFE", "RL", "RR", "SL", "SR" };
static const uint32_t SS_CHANNEL_POSITIONS[SS_PW_GRAPH_SET_CHANNELS] = {
	SPA_AUDIO_CHANNEL_FL, SPA_AUDIO_CHANNEL_FR, SPA_AUDIO_CHANNEL_FC, SPA_AUDIO_CHANNEL_LFE,
	SPA_AUDIO_CHANNEL_RL, SPA_AUDIO_CHANNEL_RR, SPA_AUDIO_CHANNEL_SL, SPA_AUDIO_CHANNEL_SR };

/* graph_quantum.c */
uint32_t ss_graph_asked_quantum(const struct ss_pw_graph *g);
void ss_graph_quantum_start(struct ss_pw_graph *g);
void ss_graph_quantum_stop(struct ss_pw_graph *g);
void ss_graph_note_graph_change(struct ss_pw_graph *g);
void ss_graph_quantum_note(struct ss_pw_graph *g, int missed, int overloaded, int64_t behind_nsec,
		uint32_t frames, uint32_t rate, uint64_t ended_nsec);

/* pipewire_graph.c */
void ss_graph_emit(struct ss_pw_graph *g, int event, uint32_t id, const char *detail);
/* graph_links.c: what to link now that the graph changed; a link made (its proxy's user data
 * of that size); sets and proxies let go. */
void ss_graph_update(struct ss_pw_graph *g);
struct pw_proxy *ss_graph_make_link(struct ss_pw_graph *g, uint32_t out_node, uint32_t out_port, uint32_t in_node,
		uint32_t in_port, size_t user_data_size);
void ss_graph_free_set(struct ss_pw_graph *g, uint32_t set);
/* graph_outputs.c: our outputs linked to the sink as far as its ports allow; all unlinked. */
void ss_graph_link_outputs_now(struct ss_pw_graph *g, uint32_t own);
void ss_graph_unlink_outputs(struct ss_pw_graph *g);
void ss_graph_store_latency(struct ss_pw_graph *g, double seconds);
void ss_graph_port_gone(struct ss_pw_graph *g, uint32_t port);
int ss_graph_make_park_sink(struct ss_pw_graph *g);
void ss_graph_destroy_park_sink(struct ss_pw_graph *g);
/* graph_events.c: the listeners, and a lost connection (reported once per outage, retried). */
extern const struct pw_registry_events ss_graph_registry_events;
extern const struct pw_core_events ss_graph_core_events;
void ss_graph_lost(struct ss_pw_graph *g, const char *why);
/* pipewire_graph.c: the next retry armed (its delay doubled, up to the maximum). */
void ss_graph_schedule_retry(struct ss_pw_graph *g);
/* graph_metadata.c */
extern const struct pw_metadata_events ss_graph_metadata_events;
void ss_graph_metadata_gone(struct ss_pw_graph *g);
/* The default sink read again `seconds` from now (a sink appeared, or none is known yet). */
void ss_graph_reread_default(struct ss_pw_graph *g, double seconds);
void ss_graph_on_reread_default(void *data, uint64_t expirations);
/* The sync after a fresh binding answered: the binding it replaced let go. */
void ss_graph_reread_done(struct ss_pw_graph *g);
/* Clears our targets and waits (≤ 1 s) for the server to have done so. */
void ss_graph_clear_targets(struct ss_pw_graph *g);
/* Waits (≤ 1 s) until the server has answered everything asked so far. Loop locked, not on
 * the loop thread. */
void ss_graph_sync_with_server(struct ss_pw_graph *g);
void ss_graph_destroy_proxies(struct pw_proxy **proxies, int count);

#endif
