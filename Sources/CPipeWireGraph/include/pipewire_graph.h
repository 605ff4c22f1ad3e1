#ifndef SCENESOUND_PIPEWIRE_GRAPH_H
#define SCENESOUND_PIPEWIRE_GRAPH_H

#include <stdint.h>

#include "pipewire_registry.h"

/* SceneSound as one real-time node of the PipeWire graph (issue 28; docs/CAPTURE.md, "The graph
 * path on PipeWire"): a pw_filter (RT_PROCESS, data thread real-time) with two outputs (FL FR)
 * and a pool of input sets of 8 mono f32 ports (FL FR FC LFE RL RR SL SR), every port added
 * before the filter connects and never added or removed while it runs; apps' output ports are
 * linked into a set by us (link-factory, object.linger=false), apps are parked on a silent 7.1
 * sink of our connection that never runs, so that only our link starts them. Beside it, one view of the
 * registry (nodes, ports, links) with lookups.
 *
 * Threads: a pw_thread_loop of its own runs the connection, the registry and every operation
 * below (each takes the loop's lock, which is recursive: event callbacks may call them). The
 * process callback runs on libpipewire's data thread under the real-time rules: nothing there
 * allocates, locks, logs or waits. A lost connection is reported once per outage and retried
 * with growing delays (the node, its port pool, the outputs' links and the park sink made again)
 * until stop.
 *
 * It is also SceneSound's output on PipeWire: 8 outputs (FL FR FC LFE RL RR SL SR, by speaker
 * number), of which those in the output mask are linked to the sink's ports of their channel.
 * A stream identity in the config names the node's application, icon, description and role
 * (pw-dump, pw-top); it stays without media.class: no mixer lists it as a stream. */

#define SS_PW_GRAPH_SET_CHANNELS 8
#define SS_PW_GRAPH_MAX_SETS 64
#define SS_PW_GRAPH_TEXT SS_PW_TEXT
#define SS_PW_GRAPH_OUT_CHANNELS 8
#define SS_PW_GRAPH_LATE_RECORD 64
#define SS_PW_GRAPH_RAISE_RECORD 8

typedef struct ss_pw_graph ss_pw_graph;

/* Every cycle, on the data thread. inputs: set_count * 8 pointers, set s channel c at
 * [s * 8 + c]; NULL = silence (the set is not in use or the port has no link). outputs: the 8
 * outputs by speaker number (FL FR FC LFE RL RR SL SR), never NULL (scratch while unlinked), to be
 * filled with frames samples each. frames and
 * rate_hz are the cycle's quantum and rate, read from the position every cycle. */
typedef void (*ss_pw_graph_process_cb)(void *userdata, const float *const *inputs, uint32_t set_count,
                                       float *const *outputs, uint32_t frames, uint32_t rate_hz);

enum ss_pw_graph_event {
	SS_PW_GRAPH_NODE_READY = 1,     /* id: our node; all its ports are in the registry */
	SS_PW_GRAPH_APP_APPEARED = 2,   /* id: a Stream/Output/Audio node; detail: its node.name */
	SS_PW_GRAPH_APP_GONE = 3,       /* id: that node (its set, if any, is free again) */
	SS_PW_GRAPH_LINK_ADDED = 4,     /* id: the link; detail: "out_node:out_port->in_node:in_port" */
	SS_PW_GRAPH_LINK_REMOVED = 5,   /* id: the link */
	SS_PW_GRAPH_PARK_SINK_READY = 6,/* id: our park sink's node */
	SS_PW_GRAPH_DISCONNECTED = 7,   /* the connection is lost or cannot be made (detail: why); once per outage */
	SS_PW_GRAPH_ERROR = 8,          /* the server refused something of ours (id: its proxy; detail: why) */
	SS_PW_GRAPH_OUTPUTS_LINKED = 9, /* id: the sink our outputs are linked to; detail: its node.name. After
	                                   a connection, link_outputs or a new mask (not when following the
	                                   default to another sink, nor after resting) */
	SS_PW_GRAPH_RECONNECTING = 10,  /* detail: the attempt number since the loss */
	SS_PW_GRAPH_FAILED = 11,        /* the wanted sink is not there (detail: which, and the sinks there are); once until linked */
	SS_PW_GRAPH_DEFAULT_SINK = 12,  /* the `default` metadata names another sink (detail: its node.name, "" for none) */
	SS_PW_GRAPH_QUANTUM = 13,       /* id: the quantum now asked of the graph, in frames; detail: why */
};

/* On the loop thread; detail is valid during the call. Must not call stop or free. */
typedef void (*ss_pw_graph_event_cb)(void *userdata, int event, uint32_t id, const char *detail);

struct ss_pw_graph_config {
	const char *remote;         /* core socket's absolute path, or NULL for libpipewire's lookup */
	const char *node_name;
	uint32_t input_sets;        /* 1 ... SS_PW_GRAPH_MAX_SETS */
	uint32_t quantum_frames;    /* node.latency asked, e.g. 256 */
	/* Doubled up to this when the graph's driver misses a period (at or below quantum_frames:
	 * never), halved again after quantum_recovery_seconds without a cycle that the smaller
	 * quantum would have missed (graph_quantum.c). */
	uint32_t maximum_quantum_frames;
	double quantum_recovery_seconds;
	uint32_t rate_hz;           /* e.g. 48000 */
	/* application.name, .icon_name, node.description, media.role; NULL: none. */
	const char *application_name, *icon_name, *description, *media_role;
	/* Reconnection delays: the first, doubling up to the maximum; 0: no reconnection. */
	double retry_initial_seconds, retry_maximum_seconds;
};

/* ---- The registry view (loop thread's copy; the lookups copy out under the lock). ---- */
/* 0 and *info filled, or -1 when no such node. */
int ss_pw_graph_node(ss_pw_graph *graph, uint32_t id, struct ss_pw_node_info *info);
/* A node's id by node.name, 0 when none. */
uint32_t ss_pw_graph_find_node(ss_pw_graph *graph, const char *name);
/* Nodes of that media.class (NULL: all), ports of a node (node 0: all), links touching a node
 * (node 0: all): how many exist; at most capacity are copied. */
uint32_t ss_pw_graph_nodes(ss_pw_graph *graph, const char *media_class, struct ss_pw_node_info *out, uint32_t capacity);
uint32_t ss_pw_graph_ports(ss_pw_graph *graph, uint32_t node, struct ss_pw_port_info *out, uint32_t capacity);
uint32_t ss_pw_graph_links(ss_pw_graph *graph, uint32_t node, struct ss_pw_link_info *out, uint32_t capacity);

/* ---- The node. ---- */
ss_pw_graph *ss_pw_graph_new(const struct ss_pw_graph_config *config, ss_pw_graph_process_cb process,
                             ss_pw_graph_event_cb event, void *userdata);
/* Starts the loop thread, connects, makes the filter with its whole port pool. 0 or -errno. */
int ss_pw_graph_start(ss_pw_graph *graph);
/* Clears every metadata target we set (and waits for the server to have it), destroys our
 * links, park sink and node, disconnects, joins the loop thread. Not from a callback. */
void ss_pw_graph_stop(ss_pw_graph *graph);
void ss_pw_graph_free(ss_pw_graph *graph);

/* Our node's id, 0 until known. */
uint32_t ss_pw_graph_node_id(ss_pw_graph *graph);
/* Links the app node's output ports into set (by audio.channel; MONO to FL and FR), only the
 * channels in channel_mask (bit c = channel c of FL FR FC LFE RL RR SL SR; 0 = all), once the
 * session manager has linked the app somewhere (the park sink); ports the app announces later
 * are linked as they come. The set is in use until unlinked or the app's
 * node goes. 0, -EINVAL (bad set), -EBUSY (set in use by another app), -ENOENT (no such node). */
int ss_pw_graph_link_set(ss_pw_graph *graph, uint32_t set, uint32_t app_node, uint32_t channel_mask);
/* Frees the set; returns once the server has destroyed its links (≤ 1 s). Not from a callback. */
void ss_pw_graph_unlink_set(ss_pw_graph *graph, uint32_t set);
/* The app node a set is linked to, 0 when free. */
uint32_t ss_pw_graph_set_app(ss_pw_graph *graph, uint32_t set);
/* Asks the server to destroy a link of the registry (anyone's: a session manager's stray link).
 * 0, or -ENOENT when the view has no such link. */
int ss_pw_graph_destroy_link(ss_pw_graph *graph, uint32_t link);
/* Links our outputs in the output mask to the sink of that node.name (or object.serial), NULL =
 * the default sink (followed when `default.audio.sink` changes); links made as soon as both
 * sides' ports exist, each output to the sink's port of its channel (FL and FR to a MONO sink's
 * port; FC, when the sink has none, to FL and FR). Kept across reconnections. */
void ss_pw_graph_link_outputs(ss_pw_graph *graph, const char *sink_name);
void ss_pw_graph_unlink_outputs(ss_pw_graph *graph);
/* Which outputs are linked (bit c: speaker c; default FL FR): relinked at once if it changed. */
void ss_pw_graph_set_output_mask(ss_pw_graph *graph, uint32_t mask);
/* Resting: our outputs unlinked (kept wanted) so the sink may suspend (the node stays active:
 * an app linked into a set that plays starts it); not resting: linked again. */
void ss_pw_graph_set_resting(ss_pw_graph *graph, int resting);
/* The sink our outputs are linked to (copied into name, "" when none). */
void ss_pw_graph_linked_sink(ss_pw_graph *graph, char *name, uint32_t size);
/* The default sink's node.name as the `default` metadata last told us ("" while none). */
void ss_pw_graph_default_sink(ss_pw_graph *graph, char *name, uint32_t size);
/* Our silent park sink: an Audio/Sink (7.1, f32 at the configured rate, node.virtual) exported
 * by our connection as a stream that is never active, so an app linked to it alone is held, not
 * started (graph_links.c); it dies with our connection. properties: a SPA-JSON object of more
 * node properties ("{ key = value ... }"), or NULL. Made again after a reconnection until
 * destroyed or stopped; -EALREADY while one is made. */
int ss_pw_graph_create_park_sink(ss_pw_graph *graph, const char *name, const char *properties);
void ss_pw_graph_destroy_park_sink(ss_pw_graph *graph);
/* The park sink's node id, 0 until it is in the registry. */
uint32_t ss_pw_graph_park_sink_id(ss_pw_graph *graph);
/* `default` metadata target.object (the target's serial) and target.node (its id) on the app's
 * node; target_node 0 clears them. 0, -ENOENT (unknown node), -EAGAIN (no metadata yet). */
int ss_pw_graph_set_target(ss_pw_graph *graph, uint32_t app_node, uint32_t target_node);

/* Deletes every `default` metadata target.object / target.node, ours or left by a SceneSound that
 * crashed, that names no node there is (a serial, or an id, that is gone) or a node whose name
 * starts with park_prefix (our park sinks); "-1" and names are left alone. Waits for the server
 * (the registry and the metadata enumerated, then the deletions done). How many entries went, or
 * -EAGAIN (no metadata). Not from a callback. */
int ss_pw_graph_sweep_targets(ss_pw_graph *graph, const char *park_prefix);

/* Read anywhere, lock-free. */
uint64_t ss_pw_graph_cycles(const ss_pw_graph *graph);
/* Our outputs that had a buffer and whose link the server says is active (the sink takes what
 * they hold), in the current (or last) cycle: bit per speaker. Read in the process callback, it
 * is this cycle's. */
uint32_t ss_pw_graph_live_outputs(const ss_pw_graph *graph);
uint32_t ss_pw_graph_quantum_frames(const ss_pw_graph *graph);
uint32_t ss_pw_graph_rate_hz(const ss_pw_graph *graph);
/* The data thread's scheduling policy at its first cycle (SCHED_FIFO = 1), -1 before. */
int ss_pw_graph_data_thread_policy(const ss_pw_graph *graph);
/* From the last cycle: the driver's delay to the device plus this cycle's quantum, in seconds;
 * negative while our outputs are not linked. */
double ss_pw_graph_output_latency_seconds(const ss_pw_graph *graph);
/* Cycles in which an output of ours that is linked had no buffer. */
uint64_t ss_pw_graph_underruns(const ss_pw_graph *graph);
/* Cycles the sink played without what we render (silence in its place, a gap to a listener):
 * our process call lasted longer than the quantum, or the driver ran a cycle between two of our
 * calls while the graph ran. */
uint64_t ss_pw_graph_late_cycles(const ss_pw_graph *graph);
/* A late cycle: when our process call ended (CLOCK_MONOTONIC seconds), how long it took and
 * how much of the data thread's CPU time, how long after the call before it this one began
 * (0 for the first), and the quantum. A call longer than the quantum outlasted its cycle; one
 * after which the driver's position had moved on by more than a cycle lost the cycle between
 * (we were not called). How far the driver's position moved since the call before, and how
 * long after the driver's cycle was due (its clock's nsec) this call and the one before began:
 * a call before that began a cycle late was still running when the driver went on. How often
 * the data thread gave its CPU up during the call (waits: a sleep, a lock, a page read from
 * disk) and had it taken by another thread (preemptions). */
struct ss_pw_graph_late_cycle {
	double ended_seconds, process_seconds, process_cpu_seconds, since_previous_seconds, quantum_seconds;
	double driver_step_seconds, behind_driver_seconds, previous_behind_driver_seconds;
	/* Runnable but waiting for a CPU since the call before began; -1 where the kernel keeps no
	 * such record. */
	double waited_for_cpu_seconds;
	uint32_t waits, preemptions;
};
/* The latest late cycles, newest first; at most capacity (and SS_PW_GRAPH_LATE_RECORD) copied,
 * how many returned. */
uint32_t ss_pw_graph_recent_late_cycles(const ss_pw_graph *graph, struct ss_pw_graph_late_cycle *cycles, uint32_t capacity);
/* The quantum asked of the graph now (node.latency), and how often it was doubled. */
uint32_t ss_pw_graph_asked_quantum_frames(const ss_pw_graph *graph);
uint64_t ss_pw_graph_quantum_raises(const ss_pw_graph *graph);
/* When the (near) miss behind each of the latest raises ended (CLOCK_MONOTONIC seconds), newest
 * first: at most capacity (and SS_PW_GRAPH_RAISE_RECORD); how many returned. The cycle heard
 * without us, if any, is that moment's. */
uint32_t ss_pw_graph_recent_quantum_raises(const ss_pw_graph *graph, double *caused_at_seconds, uint32_t capacity);
/* Cycles whose process call took more CPU time than the quantum lasts: late by our own fault. */
uint64_t ss_pw_graph_overloaded_cycles(const ss_pw_graph *graph);
/* The longest process call so far (the data thread's CPU seconds, our render included) and when
 * it ended (CLOCK_MONOTONIC seconds); 0 and 0 before the first cycle. */
void ss_pw_graph_slowest_process(const ss_pw_graph *graph, double *seconds, double *ended_at_seconds);
/* Outages after which our outputs were linked again. */
uint64_t ss_pw_graph_reconnects(const ss_pw_graph *graph);
/* Connected, our node in the registry. */
int ss_pw_graph_is_connected(const ss_pw_graph *graph);

/* Disconnects every client of process `pid` (pipewire.sec.pid; not this process) from the server
 * at `remote` (NULL: the environment's), waiting at most timeout_ms: how many there were, or -errno. */
int ss_pw_disconnect_process(const char *remote, int32_t pid, int timeout_ms);

#endif
