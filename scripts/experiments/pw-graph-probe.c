/* pw-graph-probe: measures what a "SceneSound as one node of the PipeWire graph" design
 * depends on (issue 28; results in docs/CAPTURE.md, "The graph path on PipeWire").
 * Standalone, not part of the product. Build (gcc only):
 *
 *   gcc -O2 -Wall -o pw-graph-probe scripts/experiments/pw-graph-probe.c \
 *       $(pkg-config --cflags --libs libpipewire-0.3) -lm
 *
 * One pw_filter with PW_FILTER_FLAG_RT_PROCESS: a pool of SETS input sets of SIZE mono f32
 * DSP ports (audio.channel FL FR [FC LFE RL RR SL SR]) and two outputs (FL FR), every port
 * added before pw_filter_connect (adding/removing ports while the filter runs races its
 * process walk). It links its outputs to a sink with the link-factory, and optionally links
 * each app's output ports (media.class Stream/Output/Audio) into a free set, parking the
 * app by one of the modes below. Once a second it prints the cycle's quantum, the data
 * thread's scheduling, and per set how many cycles had a buffer and each port's peak.
 *
 *   -n SETS      input sets in the pool (16)           -k SIZE   ports per set, 2 or 8 (2)
 *   -l LAT       node.latency (256/48000)              -s SINK   node.name to play to ("out")
 *   -c           capture apps (every Stream/Output/Audio node not ours; -m to filter)
 *   -m TEXT      only apps whose application.name or node.name contains TEXT
 *   -x           cross: inputs' FL go to output FR and FR to FL. With an app that plays a
 *                click on its left only, its own link puts the click on the sink's FL and
 *                ours on FR: one recording of the sink's monitor shows our added latency.
 *   -p MODE      park captured apps: none (additive, default), meta (default metadata
 *                target.object/target.node -> the park sink), unlink (destroy the app's
 *                links to anything but us, whenever they appear)
 *   -P SINK      the park sink's node.name (for -p meta); with -O, our own
 *   -O CH        create our own silent park sink (adapter + support.null-audio-sink, CH
 *                channels, node.virtual, object.linger=false: it dies with our connection)
 *   -I           idle: while no set is owned, pw_filter_set_active(false) (a no-op in 0.3.65:
 *                process still runs and the sink never suspends) and our links to the sink
 *                destroyed (this lets it suspend); made again when an app comes
 *   -K           keep metadata targets at exit (default: cleared, as the product must)
 *   -t SECONDS   run time (0 = until SIGINT/SIGTERM)
 *   -R           load client-rt.conf (PW_KEY_CONFIG_NAME, as EasyEffects does on < 1.4): its
 *                module-rt makes the data thread real-time; without it 0.3.65 leaves it OTHER
 *   -w           watch only: print timestamped node/link/metadata events (no filter), to
 *                time what WirePlumber does after a probe is killed
 * Environment, for the park sink of -O: PROBE_PARK_PRIORITY (its priority.driver: which sink
 * drives the group), PROBE_PARK_NODRIVER (node.driver=false); PROBE_NO_ALWAYS drops the
 * filter's node.always-process.
 * Times printed are CLOCK_REALTIME in ms (compare with `date +%s%3N`).
 *
 * How the figures in docs/CAPTURE.md were taken (a private server from scripts/testenv/
 * pipewire-start, its environment exported; WAVs of clicks and sines made with sox):
 *   same cycle:  probe -c -x & parec -d out.monitor --raw --format=float32le --latency-msec=20
 *                & paplay click-left.wav  -> first sample above 0.3 on FL and on FR
 *   parking:     probe -c -x -O 2 -p meta, a click at t=0: anything on FL leaked dry
 *   slider:      probe -c -O 2 -p meta; pactl set-sink-input-volume/-mute; the set's peaks
 *   crash:       probe -w (watcher) & probe -c -O 2 -p meta & paplay; kill -9; the watcher's
 *                -node / +link app -> out times against `date +%s%3N` at the kill
 *   surround:    probe -k 8 -n 2 -c -O 2|8 -p meta & paplay --channel-map=front-left,...,
 *                rear-right of a 6-channel 1 kHz tone at 0.1 ... 0.6: the peaks per port
 *   idle:        probe [-I] -c -O 2 -p meta; pactl list short sinks after 6.5 s
 *   load:        4 apps direct + 4 captured (-x), two `while :; do :; done`, tones per
 *                10 ms window on FL (direct) and FR (captured)
 */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <pipewire/pipewire.h>
#include <pipewire/filter.h>
#include <pipewire/extensions/metadata.h>
#include <spa/utils/result.h>

#define MAX_SETS 64
#define MAX_SIZE 8
#define MAX_OBJ 4096

static const char *CHANNELS[MAX_SIZE] = { "FL", "FR", "FC", "LFE", "RL", "RR", "SL", "SR" };

struct obj {            /* what the registry announced (nodes, ports, links) */
	uint32_t id, type;  /* type: 1 node, 2 port, 3 link */
	uint32_t node;      /* port: its node; link: output node */
	uint32_t peer;      /* link: input node */
	uint32_t out_port, in_port;
	int dir_out;
	char name[128], channel[16], klass[64], app[128], serial[32];
	int set;            /* node: the set captured into, or -1 */
	int linked[MAX_SIZE * 2];
};

struct probe {
	struct pw_main_loop *loop;
	struct pw_context *context;
	struct pw_core *core;
	struct spa_hook core_listener;
	struct pw_registry *registry;
	struct spa_hook registry_listener;
	struct pw_filter *filter;
	struct spa_hook filter_listener;
	void *in[MAX_SETS][MAX_SIZE];
	void *out[2];
	uint32_t in_gid[MAX_SETS][MAX_SIZE], out_gid[2];
	int sets, size, cross, capture, park_mode, keep_meta, watch, rt_conf, idle, active;
	long long activated_ms, first_cycle_ms;
	const char *latency, *sink, *match, *park_sink;
	int own_sink_channels;
	struct pw_proxy *own_sink;
	struct pw_metadata *metadata;
	struct spa_hook metadata_listener;
	uint32_t metadata_id;
	uint32_t node_id;
	int outputs_linked;
	struct pw_proxy *out_links[4];
	int set_owner[MAX_SETS];            /* app node id in each set, 0 = free */
	struct obj objs[MAX_OBJ];
	int nobj;
	/* written by the data thread, read once a second */
	uint64_t cycles;
	uint32_t quantum, rate;
	int tid, policy, priority;
	uint64_t buffered[MAX_SETS];
	float peak[MAX_SETS][MAX_SIZE];
};
static struct probe P;

static long long now_ms(void)
{
	struct timespec t;
	clock_gettime(CLOCK_REALTIME, &t);
	return (long long)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}
#define LOG(...) do { printf("%lld ", now_ms()); printf(__VA_ARGS__); printf("\n"); fflush(stdout); } while (0)

/* ---- the real-time part ---- */
static void on_process(void *data, struct spa_io_position *position)
{
	struct probe *p = data;
	uint32_t n = position->clock.duration;
	if (p->cycles == 0) {   /* which thread runs us, at what scheduling */
		struct sched_param sp;
		int policy;
		pthread_getschedparam(pthread_self(), &policy, &sp);
		p->tid = (int)syscall(SYS_gettid);
		p->policy = policy;
		p->priority = sp.sched_priority;
	}
	p->cycles++;
	if (p->first_cycle_ms == 0)
		p->first_cycle_ms = now_ms();
	p->quantum = n;
	p->rate = position->clock.rate.denom;
	float *o[2];
	for (int i = 0; i < 2; i++) {
		o[i] = pw_filter_get_dsp_buffer(p->out[i], n);
		if (o[i])
			memset(o[i], 0, n * sizeof(float));
	}
	for (int s = 0; s < p->sets; s++) {
		int any = 0;
		for (int c = 0; c < p->size; c++) {
			/* NULL when the port has no link: silence for free */
			float *in = pw_filter_get_dsp_buffer(p->in[s][c], n);
			if (in == NULL)
				continue;
			any = 1;
			float pk = p->peak[s][c];
			for (uint32_t i = 0; i < n; i++)
				if (fabsf(in[i]) > pk)
					pk = fabsf(in[i]);
			p->peak[s][c] = pk;
			if (c < 2) {
				float *dst = o[p->cross ? 1 - c : c];
				if (dst)
					for (uint32_t i = 0; i < n; i++)
						dst[i] += in[i];
			}
		}
		if (any)
			p->buffered[s]++;
	}
}

static void on_state(void *data, enum pw_filter_state old, enum pw_filter_state state, const char *error)
{
	struct probe *p = data;
	(void)old;
	p->node_id = pw_filter_get_node_id(p->filter);
	LOG("filter state %s node %u%s%s", pw_filter_state_as_string(state), p->node_id,
			error ? " error " : "", error ? error : "");
}

static const struct pw_filter_events filter_events = {
	PW_VERSION_FILTER_EVENTS,
	.state_changed = on_state,
	.process = on_process,
};

/* ---- the registry view ---- */
static struct obj *find(uint32_t id)
{
	for (int i = 0; i < P.nobj; i++)
		if (P.objs[i].id == id)
			return &P.objs[i];
	return NULL;
}
static const char *node_name(uint32_t id)
{
	struct obj *o = find(id);
	return o ? o->name : "?";
}
static struct obj *find_node(const char *name)
{
	for (int i = 0; i < P.nobj; i++)
		if (P.objs[i].type == 1 && strcmp(P.objs[i].name, name) == 0)
			return &P.objs[i];
	return NULL;
}

static struct pw_proxy *make_link(uint32_t out_node, uint32_t out_port, uint32_t in_node, uint32_t in_port)
{
	char a[16], b[16], c[16], d[16];
	snprintf(a, sizeof a, "%u", out_node); snprintf(b, sizeof b, "%u", out_port);
	snprintf(c, sizeof c, "%u", in_node); snprintf(d, sizeof d, "%u", in_port);
	struct pw_properties *props = pw_properties_new(
			PW_KEY_LINK_OUTPUT_NODE, a, PW_KEY_LINK_OUTPUT_PORT, b,
			PW_KEY_LINK_INPUT_NODE, c, PW_KEY_LINK_INPUT_PORT, d,
			PW_KEY_OBJECT_LINGER, "false", NULL);   /* dies with our connection */
	struct pw_proxy *proxy = pw_core_create_object(P.core, "link-factory", PW_TYPE_INTERFACE_Link,
			PW_VERSION_LINK, &props->dict, 0);
	pw_properties_free(props);
	/* kept: destroying the proxy destroys a non-lingering link (how -I unlinks the sink) */
	LOG("link requested %s:%u -> %s:%u", node_name(out_node), out_port, node_name(in_node), in_port);
	return proxy;
}

static void set_target(uint32_t app, const char *serial, const char *id)
{
	if (P.metadata == NULL)
		return;
	pw_metadata_set_property(P.metadata, app, "target.object", serial ? "Spa:Id" : NULL, serial);
	pw_metadata_set_property(P.metadata, app, "target.node", id ? "Spa:Id" : NULL, id);
	LOG("metadata target of %u (%s) -> %s", app, node_name(app), serial ? serial : "(cleared)");
}

static int wanted_app(struct obj *n)
{
	if (!P.capture || n->type != 1 || n->id == P.node_id)
		return 0;
	if (strcmp(n->klass, "Stream/Output/Audio") != 0)
		return 0;
	if (P.match && !strstr(n->app, P.match) && !strstr(n->name, P.match))
		return 0;
	return 1;
}

/* Called after every registry change: make whatever links are now possible. */
static void update(void)
{
	if (P.watch || P.node_id == 0 || P.node_id == SPA_ID_INVALID)
		return;
	/* our ports' global ids */
	for (int i = 0; i < P.nobj; i++) {
		struct obj *o = &P.objs[i];
		if (o->type != 2 || o->node != P.node_id)
			continue;
		int s, c;
		char ch[16];
		if (sscanf(o->name, "in_%d_%15s", &s, ch) == 2) {
			for (c = 0; c < P.size; c++)
				if (strcmp(ch, CHANNELS[c]) == 0 && s < P.sets)
					P.in_gid[s][c] = o->id;
		} else if (strcmp(o->name, "out_FL") == 0)
			P.out_gid[0] = o->id;
		else if (strcmp(o->name, "out_FR") == 0)
			P.out_gid[1] = o->id;
	}
	/* outputs -> the sink */
	struct obj *sink = find_node(P.sink);
	if (sink && !P.outputs_linked && P.out_gid[0] && P.out_gid[1] && (!P.idle || P.active)) {
		int done = 0;
		for (int i = 0; i < P.nobj; i++) {
			struct obj *o = &P.objs[i];
			if (o->type == 2 && o->node == sink->id && !o->dir_out)
				for (int c = 0; c < 2; c++)
					if (strcmp(o->channel, CHANNELS[c]) == 0) {
						if (done < 4)
							P.out_links[done] = make_link(P.node_id, P.out_gid[c], sink->id, o->id);
						done++;
					}
		}
		P.outputs_linked = done >= 2;
	}
	/* apps -> a free set */
	struct obj *park = P.park_sink ? find_node(P.park_sink) : NULL;
	for (int i = 0; i < P.nobj; i++) {
		struct obj *n = &P.objs[i];
		if (!wanted_app(n))
			continue;
		if (n->set < 0) {
			for (int s = 0; s < P.sets; s++)
				if (P.set_owner[s] == 0) {
					n->set = s;
					P.set_owner[s] = n->id;
					LOG("app %u (%s / %s) takes set %d", n->id, n->app, n->name, s);
					break;
				}
			if (n->set < 0)
				continue;
			if (P.park_mode == 1 && park) {
				char id[16];
				snprintf(id, sizeof id, "%u", park->id);
				set_target(n->id, park->serial, id);
			}
		}
		for (int j = 0; j < P.nobj; j++) {
			struct obj *port = &P.objs[j];
			if (port->type != 2 || port->node != n->id || !port->dir_out)
				continue;
			for (int c = 0; c < P.size; c++) {
				int mono = strcmp(port->channel, "MONO") == 0 && c < 2;
				if ((strcmp(port->channel, CHANNELS[c]) == 0 || mono) && P.in_gid[n->set][c]
						&& !port->linked[c]) {
					port->linked[c] = 1;
					make_link(n->id, port->id, P.node_id, P.in_gid[n->set][c]);
				}
			}
		}
	}
	/* idle: inactive while no app is captured */
	if (P.idle) {
		int owned = 0;
		for (int s = 0; s < P.sets; s++)
			owned += P.set_owner[s] != 0;
		if ((owned > 0) != P.active) {
			P.active = owned > 0;
			if (P.active) {
				P.first_cycle_ms = 0;
				P.activated_ms = now_ms();
			}
			pw_filter_set_active(P.filter, P.active);
			if (!P.active) {
				for (int i = 0; i < 4; i++)
					if (P.out_links[i]) {
						pw_proxy_destroy(P.out_links[i]);
						P.out_links[i] = NULL;
					}
				P.outputs_linked = 0;
			} else {
				update();   /* link the outputs now */
				return;
			}
			LOG("filter set %s", P.active ? "active" : "inactive");
		}
	}
	/* unlink parking: any link from a captured app to anything but us goes */
	if (P.park_mode == 2)
		for (int i = 0; i < P.nobj; i++) {
			struct obj *l = &P.objs[i];
			struct obj *n = l->type == 3 ? find(l->node) : NULL;
			if (n && n->set >= 0 && l->peer != P.node_id && l->name[0] != 'x') {
				l->name[0] = 'x';
				LOG("destroying link %u %s -> %s", l->id, n->name, node_name(l->peer));
				pw_registry_destroy(P.registry, l->id);
			}
		}
}

static int on_metadata_property(void *data, uint32_t subject, const char *key, const char *type, const char *value)
{
	(void)data; (void)type;
	if (key && (strncmp(key, "target.", 7) == 0 || strncmp(key, "default.", 8) == 0))
		LOG("metadata %u (%s) %s = %s", subject, node_name(subject), key, value ? value : "(null)");
	return 0;
}
static const struct pw_metadata_events metadata_events = {
	PW_VERSION_METADATA_EVENTS, .property = on_metadata_property,
};

static void on_global(void *data, uint32_t id, uint32_t permissions, const char *type, uint32_t version,
		const struct spa_dict *props)
{
	(void)data; (void)permissions; (void)version;
	if (strcmp(type, PW_TYPE_INTERFACE_Metadata) == 0) {
		const char *name = props ? spa_dict_lookup(props, PW_KEY_METADATA_NAME) : NULL;
		if (name && strcmp(name, "default") == 0 && P.metadata == NULL) {
			P.metadata = pw_registry_bind(P.registry, id, type, PW_VERSION_METADATA, 0);
			P.metadata_id = id;
			pw_metadata_add_listener(P.metadata, &P.metadata_listener, &metadata_events, &P);
		}
		return;
	}
	int kind = strcmp(type, PW_TYPE_INTERFACE_Node) == 0 ? 1 : strcmp(type, PW_TYPE_INTERFACE_Port) == 0 ? 2
		: strcmp(type, PW_TYPE_INTERFACE_Link) == 0 ? 3 : 0;
	if (kind == 0 || props == NULL || P.nobj >= MAX_OBJ)
		return;
	struct obj *o = &P.objs[P.nobj++];
	memset(o, 0, sizeof *o);
	o->id = id;
	o->type = kind;
	o->set = -1;
	const char *v;
#define COPY(field, key) if ((v = spa_dict_lookup(props, key))) snprintf(o->field, sizeof o->field, "%s", v)
	if (kind == 1) {
		COPY(name, PW_KEY_NODE_NAME);
		COPY(klass, PW_KEY_MEDIA_CLASS);
		COPY(app, PW_KEY_APP_NAME);
		COPY(serial, PW_KEY_OBJECT_SERIAL);
		if (P.watch)
			LOG("+node %u %s [%s]", id, o->name, o->klass);
	} else if (kind == 2) {
		COPY(name, PW_KEY_PORT_NAME);
		COPY(channel, PW_KEY_AUDIO_CHANNEL);
		if ((v = spa_dict_lookup(props, PW_KEY_NODE_ID)))
			o->node = atoi(v);
		if ((v = spa_dict_lookup(props, PW_KEY_PORT_DIRECTION)))
			o->dir_out = strcmp(v, "out") == 0;
	} else {
		if ((v = spa_dict_lookup(props, PW_KEY_LINK_OUTPUT_NODE)))
			o->node = atoi(v);
		if ((v = spa_dict_lookup(props, PW_KEY_LINK_INPUT_NODE)))
			o->peer = atoi(v);
		if ((v = spa_dict_lookup(props, PW_KEY_LINK_OUTPUT_PORT)))
			o->out_port = atoi(v);
		if ((v = spa_dict_lookup(props, PW_KEY_LINK_INPUT_PORT)))
			o->in_port = atoi(v);
		struct obj *op = find(o->out_port), *ip = find(o->in_port);
		LOG("+link %u %s:%s -> %s:%s", id, node_name(o->node), op ? op->channel : "?",
				node_name(o->peer), ip ? ip->channel : "?");
	}
	update();
}

static void on_global_remove(void *data, uint32_t id)
{
	(void)data;
	struct obj *o = find(id);
	if (o == NULL)
		return;
	if (o->type == 1 && (P.watch || o->set >= 0))
		LOG("-node %u %s", id, o->name);
	if (o->type == 3)
		LOG("-link %u %s -> %s", id, node_name(o->node), node_name(o->peer));
	if (o->type == 1 && o->set >= 0) {   /* its set is free again, ports untouched */
		LOG("set %d free (app %u gone)", o->set, id);
		P.set_owner[o->set] = 0;
		if (P.metadata && !P.keep_meta)
			set_target(id, NULL, NULL);
	}
	*o = P.objs[--P.nobj];
	update();
}

static const struct pw_registry_events registry_events = {
	PW_VERSION_REGISTRY_EVENTS, .global = on_global, .global_remove = on_global_remove,
};

static void on_core_error(void *data, uint32_t id, int seq, int res, const char *message)
{
	(void)data;
	LOG("core error id %u seq %d: %s (%s)", id, seq, message, spa_strerror(res));
}
static const struct pw_core_events core_events = { PW_VERSION_CORE_EVENTS, .error = on_core_error };

static void on_tick(void *data, uint64_t expirations)
{
	(void)data; (void)expirations;
	static long long start;
	if (start == 0)
		start = now_ms();
	if (P.watch)
		return;
	int policy = P.policy & ~SCHED_RESET_ON_FORK;
	if (P.activated_ms && P.first_cycle_ms >= P.activated_ms) {
		LOG("first cycle %lld ms after activation", P.first_cycle_ms - P.activated_ms);
		P.activated_ms = 0;
	}
	const char *pol = policy == SCHED_FIFO ? "FIFO" : policy == SCHED_RR ? "RR" : "OTHER";
	printf("%lld cycles %llu quantum %u rate %u thread %d %s/%d main %d |", now_ms(),
			(unsigned long long)P.cycles, P.quantum, P.rate, P.tid, pol, P.priority, (int)getpid());
	for (int s = 0; s < P.sets; s++) {
		if (P.buffered[s] == 0 && P.set_owner[s] == 0)
			continue;
		printf(" set%d[app %u buffered %llu pk", s, P.set_owner[s], (unsigned long long)P.buffered[s]);
		for (int c = 0; c < P.size; c++) {
			printf(" %s=%.3f", CHANNELS[c], P.peak[s][c]);
			P.peak[s][c] = 0;
		}
		printf("]");
	}
	printf("\n");
	fflush(stdout);
}

static void on_signal(void *data, int signal_number)
{
	(void)data; (void)signal_number;
	pw_main_loop_quit(P.loop);
}
static void on_timeout(void *data, uint64_t expirations)
{
	(void)data; (void)expirations;
	pw_main_loop_quit(P.loop);
}

static void create_own_sink(void)
{
	static const char *pos[] = { "[ MONO ]", "[ FL FR ]", "", "", "", "[ FL FR FC LFE RL RR ]", "",
		"[ FL FR FC LFE RL RR SL SR ]" };
	char ch[8];
	snprintf(ch, sizeof ch, "%d", P.own_sink_channels);
	struct pw_properties *props = pw_properties_new(
			"factory.name", "support.null-audio-sink",
			PW_KEY_NODE_NAME, P.park_sink,
			PW_KEY_NODE_DESCRIPTION, "probe park sink",
			PW_KEY_MEDIA_CLASS, "Audio/Sink",
			"audio.channels", ch,
			"audio.position", pos[P.own_sink_channels - 1],
			PW_KEY_NODE_VIRTUAL, "true",
			"monitor.channel-volumes", "true",
			PW_KEY_OBJECT_LINGER, "false", NULL);
	/* PROBE_PARK_PRIORITY: its priority.driver, to choose which sink drives the group (a
	 * driving sink's monitor is recorded one quantum late: mind it when comparing monitors) */
	if (getenv("PROBE_PARK_PRIORITY"))
		pw_properties_set(props, PW_KEY_PRIORITY_DRIVER, getenv("PROBE_PARK_PRIORITY"));
	if (getenv("PROBE_PARK_NODRIVER"))   /* never the driver: the real sink keeps driving */
		pw_properties_set(props, PW_KEY_NODE_DRIVER, "false");
	P.own_sink = pw_core_create_object(P.core, "adapter", PW_TYPE_INTERFACE_Node, PW_VERSION_NODE,
			&props->dict, 0);
	pw_properties_free(props);
	LOG("own park sink %s (%d channels) requested", P.park_sink, P.own_sink_channels);
}

int main(int argc, char **argv)
{
	P.sets = 16; P.size = 2; P.latency = "256/48000"; P.sink = "out";
	double seconds = 0;
	int opt;
	while ((opt = getopt(argc, argv, "n:k:l:s:cm:xp:P:O:Kt:wRI")) != -1) {
		switch (opt) {
		case 'n': P.sets = atoi(optarg); break;
		case 'k': P.size = atoi(optarg); break;
		case 'l': P.latency = optarg; break;
		case 's': P.sink = optarg; break;
		case 'c': P.capture = 1; break;
		case 'm': P.match = optarg; break;
		case 'x': P.cross = 1; break;
		case 'p': P.park_mode = strcmp(optarg, "meta") == 0 ? 1 : strcmp(optarg, "unlink") == 0 ? 2 : 0; break;
		case 'P': P.park_sink = optarg; break;
		case 'O': P.own_sink_channels = atoi(optarg); break;
		case 'K': P.keep_meta = 1; break;
		case 't': seconds = atof(optarg); break;
		case 'w': P.watch = 1; break;
		case 'R': P.rt_conf = 1; break;
		case 'I': P.idle = 1; P.active = 1; break; /* the first update() deactivates */
		default: fprintf(stderr, "see the comment at the top of pw-graph-probe.c\n"); return 2;
		}
	}
	if (P.sets < 1 || P.sets > MAX_SETS || (P.size != 2 && P.size != 8))
		return 2;
	if (P.own_sink_channels && P.park_sink == NULL)
		P.park_sink = "probe_park";
	pw_init(&argc, &argv);
	P.loop = pw_main_loop_new(NULL);
	struct pw_loop *l = pw_main_loop_get_loop(P.loop);
	pw_loop_add_signal(l, SIGINT, on_signal, NULL);
	pw_loop_add_signal(l, SIGTERM, on_signal, NULL);
	P.context = pw_context_new(l, P.rt_conf ? pw_properties_new(PW_KEY_CONFIG_NAME, "client-rt.conf", NULL) : NULL, 0);
	P.core = pw_context_connect(P.context, NULL, 0);
	if (P.core == NULL) {
		perror("connect");
		return 1;
	}
	pw_core_add_listener(P.core, &P.core_listener, &core_events, NULL);
	P.registry = pw_core_get_registry(P.core, PW_VERSION_REGISTRY, 0);
	pw_registry_add_listener(P.registry, &P.registry_listener, &registry_events, NULL);

	struct timespec one = { 1, 0 }, when = { 0, 1 };
	pw_loop_update_timer(l, pw_loop_add_timer(l, on_tick, NULL), &when, &one, false);
	if (seconds > 0) {
		struct timespec end = { (time_t)seconds, (long)((seconds - (time_t)seconds) * 1e9) };
		pw_loop_update_timer(l, pw_loop_add_timer(l, on_timeout, NULL), &end, NULL, false);
	}
	if (P.own_sink_channels)
		create_own_sink();

	if (!P.watch) {
		/* No media.class: WirePlumber leaves the node alone; we link everything ourselves. */
		/* pw_filter_new on our core, not pw_filter_new_simple: that one makes a context (and
		 * a connection and data thread) of its own, which -R's configuration does not reach. */
		P.filter = pw_filter_new(P.core, "pw-graph-probe",
				pw_properties_new(PW_KEY_MEDIA_TYPE, "Audio", PW_KEY_MEDIA_CATEGORY, "Filter",
					PW_KEY_MEDIA_ROLE, "DSP", PW_KEY_NODE_NAME, "pw-graph-probe",
					PW_KEY_NODE_LATENCY, P.latency, PW_KEY_NODE_ALWAYS_PROCESS, getenv("PROBE_NO_ALWAYS") ? "false" : "true", NULL));
		pw_filter_add_listener(P.filter, &P.filter_listener, &filter_events, &P);
		for (int s = 0; s < P.sets; s++)
			for (int c = 0; c < P.size; c++) {
				char name[32];
				snprintf(name, sizeof name, "in_%d_%s", s, CHANNELS[c]);
				P.in[s][c] = pw_filter_add_port(P.filter, PW_DIRECTION_INPUT, PW_FILTER_PORT_FLAG_MAP_BUFFERS, 0,
						pw_properties_new(PW_KEY_FORMAT_DSP, "32 bit float mono audio",
							PW_KEY_PORT_NAME, name, PW_KEY_AUDIO_CHANNEL, CHANNELS[c], NULL), NULL, 0);
			}
		for (int c = 0; c < 2; c++) {
			char name[32];
			snprintf(name, sizeof name, "out_%s", CHANNELS[c]);
			P.out[c] = pw_filter_add_port(P.filter, PW_DIRECTION_OUTPUT, PW_FILTER_PORT_FLAG_MAP_BUFFERS, 0,
					pw_properties_new(PW_KEY_FORMAT_DSP, "32 bit float mono audio",
						PW_KEY_PORT_NAME, name, PW_KEY_AUDIO_CHANNEL, CHANNELS[c], NULL), NULL, 0);
		}
		if (pw_filter_connect(P.filter, PW_FILTER_FLAG_RT_PROCESS | (P.idle ? PW_FILTER_FLAG_INACTIVE : 0), NULL, 0) < 0) {
			fprintf(stderr, "pw_filter_connect failed\n");
			return 1;
		}
	}
	pw_main_loop_run(P.loop);

	/* Stop: clear every metadata target we set, and wait until the server has them. */
	if (P.metadata && !P.keep_meta)
		for (int s = 0; s < P.sets; s++)
			if (P.set_owner[s])
				set_target(P.set_owner[s], NULL, NULL);
	pw_core_sync(P.core, PW_ID_CORE, 0);
	struct timespec settle = { 0, 100000000 };
	nanosleep(&settle, NULL);
	for (int i = 0; i < 5; i++)
		pw_loop_iterate(l, 10);
	if (P.filter)
		pw_filter_destroy(P.filter);
	LOG("exit");
	pw_core_disconnect(P.core);
	pw_context_destroy(P.context);
	pw_main_loop_destroy(P.loop);
	pw_deinit();
	return 0;
}
