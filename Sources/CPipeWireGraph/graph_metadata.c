/* The graph node and the `default` metadata: the default sink followed, every target.* entry
 * seen (for the sweep), the targets we write on apps' nodes, cleared at stop, and the sweep of
 * stale ones (loop thread; each exported operation takes the loop's lock). */
#include "graph_internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <spa/utils/json.h>

static void on_metadata_property(void *data, uint32_t subject, const char *key, const char *type, const char *value);
static int metadata_property(void *data, uint32_t subject, const char *key, const char *type, const char *value)
{
	on_metadata_property(data, subject, key, type, value);
	return 0;
}
const struct pw_metadata_events ss_graph_metadata_events = { PW_VERSION_METADATA_EVENTS, .property = metadata_property };

/* `default.audio.sink` is JSON, { "name": "out" }: its "name", read with SPA's own JSON parser
 * (escapes and all); empty when absent or not an object. */
static void default_sink_name(const char *value, char *name, int size)
{
	struct spa_json document, object;
	char key[64];
	const char *skipped;
	name[0] = '\0';
	if (value == NULL)
		return;
	spa_json_init(&document, value, strlen(value));
	if (spa_json_enter_object(&document, &object) <= 0)
		return;
	while (spa_json_get_string(&object, key, sizeof(key)) > 0) {
		if (strcmp(key, "name") == 0) {
			if (spa_json_get_string(&object, name, size) <= 0)
				name[0] = '\0';
			return;
		}
		if (spa_json_next(&object, &skipped) <= 0)
			return;
	}
}

/* target.object / target.node entries kept as announced (a NULL value removes one; a NULL key
 * clears the subject's, or all with PW_ID_ANY), for the sweep. */
static void note_target(struct ss_pw_graph *g, uint32_t subject, const char *key, const char *value)
{
	int is_object = key != NULL && strcmp(key, "target.object") == 0;
	if (key != NULL && !is_object && strcmp(key, "target.node") != 0)
		return;
	for (uint32_t i = 0; i < g->seen_target_count; i++) {
		struct ss_seen_target *t = &g->seen_targets[i];
		if ((subject == PW_ID_ANY || t->subject == subject) && (key == NULL || t->is_object == is_object)) {
			*t = g->seen_targets[--g->seen_target_count];
			i--;
		}
	}
	if (key != NULL && value != NULL && g->seen_target_count < SPA_N_ELEMENTS(g->seen_targets)) {
		struct ss_seen_target *t = &g->seen_targets[g->seen_target_count++];
		t->subject = subject;
		t->is_object = is_object;
		snprintf(t->value, sizeof(t->value), "%s", value);
	}
}

static void on_metadata_property(void *data, uint32_t subject, const char *key, const char *type, const char *value)
{
	struct ss_pw_graph *g = data;
	(void)type;
	note_target(g, subject, key, value);
	if (subject != PW_ID_CORE || key == NULL || strcmp(key, "default.audio.sink") != 0)
		return;
	char name[SS_PW_GRAPH_TEXT];
	default_sink_name(value, name, sizeof(name));
	if (strcmp(name, g->default_sink) == 0)
		return;
	snprintf(g->default_sink, sizeof(g->default_sink), "%s", name);
	if (name[0] != '\0')
		g->reread_delay = 0;
	ss_graph_emit(g, SS_PW_GRAPH_DEFAULT_SINK, 0, name);
	/* Linked already to the sink that is now the default (it was found by name before the
	 * metadata came): nothing to change. */
	if (g->outputs_wanted && g->follow_default && strcmp(g->linked_sink_name, name) != 0)
		ss_graph_unlink_outputs(g);
	ss_graph_update(g);
}

int ss_pw_graph_set_target(ss_pw_graph *g, uint32_t app_node, uint32_t target_node)
{
	int result = 0;
	pw_thread_loop_lock(g->loop);
	struct ss_pw_node_info *target = target_node != 0 ? ss_pw_view_node(&g->view, target_node) : NULL;
	if (g->metadata == NULL)
		result = -EAGAIN;
	else if (target_node != 0 && target == NULL)
		result = -ENOENT;
	else {
		char serial[24], id[16];
		if (target != NULL) {
			snprintf(serial, sizeof(serial), "%llu", (unsigned long long)target->serial);
			snprintf(id, sizeof(id), "%u", target_node);
		}
		/* target.object (the serial) is what WirePlumber reads first: ids are reused. */
		pw_metadata_set_property(g->metadata, app_node, "target.object", target ? "Spa:Id" : NULL, target ? serial : NULL);
		pw_metadata_set_property(g->metadata, app_node, "target.node", target ? "Spa:Id" : NULL, target ? id : NULL);
		uint32_t i = 0;
		while (i < g->targeted_count && g->targeted[i] != app_node)
			i++;
		if (target != NULL && i == g->targeted_count && g->targeted_count < SPA_N_ELEMENTS(g->targeted))
			g->targeted[g->targeted_count++] = app_node;
		else if (target == NULL && i < g->targeted_count)
			g->targeted[i] = g->targeted[--g->targeted_count];
	}
	pw_thread_loop_unlock(g->loop);
	return result;
}

/* PipeWire's module-metadata (0.3.65, and unchanged upstream) forwards the owner's property
 * events, while any binding awaits the owner's pong, only to the bindings still awaiting it: a
 * default chosen in that window never reaches an older binding. Every client binds the metadata
 * as it connects (pipewire-pulse once for each of its clients), so the window opens with every
 * new client: the default the session manager names as a sink appears after a restart of the
 * server (the node then followed no sink: PipeWireOutputTests, 1 run in 15 under two busy loops),
 * or the one the user picks while a `pactl` or `parec` starts (DeviceRenderingDaemonTests, the
 * capture's `theUsersChoiceOfDefaultBecomesTheRealSink`, about 1 run in 10 under a compile), was
 * missed so. Worse, a client that goes while its binding awaits the pong is never taken off the
 * count of waiting bindings (the binding's destroy does not do it, up to PipeWire 1.4 and
 * upstream now): from then on every older binding misses every event, only a new one reads the
 * metadata as it is (PipeWireOutputTests' `aDefaultHiddenFromOlderBindingsIsFollowed` makes
 * this state). So the default is read again — the metadata bound anew, which replays what it
 * holds — a moment after a client comes or goes or a sink appears, and, while the node follows
 * the default and none is known, with delays doubling from a quarter second to 30 s. A read is
 * never put off by a later request (a stream of clients would put it off for good); no timer
 * runs while nothing comes or goes and a default is known. */
void ss_graph_reread_default(struct ss_pw_graph *g, double seconds)
{
	if (g->reread_timer == NULL)
		return;
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	double now_seconds = (double)now.tv_sec + now.tv_nsec * 1e-9, due = now_seconds + seconds;
	if (g->reread_due > now_seconds && g->reread_due <= due)
		return;
	g->reread_due = due;
	struct timespec value = { .tv_sec = (time_t)seconds, .tv_nsec = (long)((seconds - (time_t)seconds) * 1e9) };
	pw_loop_update_timer(pw_thread_loop_get_loop(g->loop), g->reread_timer, &value, NULL, false);
}

/* A binding may be let go only once the owner has answered its ping: one destroyed while it still
 * waits is never taken off the module's count of waiting bindings, and every other binding would
 * then miss every event for good. The server serves none of our messages while a binding of ours
 * waits (the client is busy), so the answer to a sync sent after the new binding tells that it
 * no longer does; the old binding, long answered, is let go then (ss_graph_reread_done). */
void ss_graph_on_reread_default(void *data, uint64_t expirations)
{
	struct ss_pw_graph *g = data;
	(void)expirations;
	g->reread_due = 0;
	if (!g->started || g->disconnected || g->registry == NULL || g->metadata == NULL)
		return;
	if (g->metadata_old != NULL) {   /* the last one not answered yet: again a moment later */
		ss_graph_reread_default(g, 0.05);
		return;
	}
	struct pw_metadata *fresh = pw_registry_bind(g->registry, g->metadata_id, PW_TYPE_INTERFACE_Metadata, PW_VERSION_METADATA, 0);
	if (fresh == NULL)
		return;
	g->metadata_old = g->metadata;
	spa_hook_remove(&g->metadata_listener);
	pw_metadata_add_listener(g->metadata_old, &g->metadata_old_listener, &ss_graph_metadata_events, g);
	g->metadata = fresh;
	pw_metadata_add_listener(g->metadata, &g->metadata_listener, &ss_graph_metadata_events, g);
	g->reread_seq = pw_core_sync(g->core, PW_ID_CORE, 0);
	if (g->default_sink[0] == '\0' && g->follow_default && g->outputs_wanted) {
		/* Checked at the next expiry: the replay arrives after this returns. */
		g->reread_delay = g->reread_delay <= 0 ? 0.25 : SPA_MIN(2 * g->reread_delay, 30.0);
		ss_graph_reread_default(g, g->reread_delay);
	}
}

void ss_graph_reread_done(struct ss_pw_graph *g)
{
	if (g->metadata_old == NULL)
		return;
	spa_hook_remove(&g->metadata_old_listener);
	pw_proxy_destroy((struct pw_proxy *)g->metadata_old);
	g->metadata_old = NULL;
}

/* The binding let go, with what the metadata held: its owner (WirePlumber) removed it — a
 * restart of WirePlumber does, and makes a new one, bound when it is announced — or our
 * connection ends. The targets we wrote went with it; the default sink is kept until the new
 * metadata names one. */
void ss_graph_metadata_gone(struct ss_pw_graph *g)
{
	if (g->metadata != NULL) {
		spa_hook_remove(&g->metadata_listener);
		pw_proxy_destroy((struct pw_proxy *)g->metadata);
	}
	ss_graph_reread_done(g);
	g->metadata = NULL;
	g->metadata_id = 0;
	g->targeted_count = 0;
	g->seen_target_count = 0;
}

/* Clears our metadata targets and waits (≤ 1 s) until the server has done so: a target we
 * wrote outlives our connection. */
void ss_graph_clear_targets(struct ss_pw_graph *g)
{
	if (g->metadata == NULL || g->disconnected || g->targeted_count == 0)
		return;
	while (g->targeted_count > 0)
		ss_pw_graph_set_target(g, g->targeted[g->targeted_count - 1], 0);
	ss_graph_sync_with_server(g);
}

void ss_graph_sync_with_server(struct ss_pw_graph *g)
{
	if (g->core == NULL || g->disconnected)
		return;
	g->synced = 0;
	g->sync_seq = pw_core_sync(g->core, PW_ID_CORE, 0);
	while (!g->synced)
		if (pw_thread_loop_timed_wait(g->loop, 1) != 0)
			break;
}

int ss_pw_graph_sweep_targets(ss_pw_graph *g, const char *park_prefix)
{
	pw_thread_loop_lock(g->loop);
	/* Twice: the registry's globals (the metadata among them), then the metadata's properties
	 * that its binding asked for. */
	ss_graph_sync_with_server(g);
	ss_graph_sync_with_server(g);
	int swept = -EAGAIN;
	if (g->metadata != NULL) {
		swept = 0;
		size_t prefix = park_prefix != NULL ? strlen(park_prefix) : 0;
		for (uint32_t i = 0; i < g->seen_target_count; i++) {
			struct ss_seen_target *t = &g->seen_targets[i];
			char *end;
			unsigned long long number = strtoull(t->value, &end, 10);
			struct ss_pw_node_info *target = NULL;
			for (uint32_t n = 0; end != t->value && *end == '\0' && n < g->view.node_count; n++)
				if (t->is_object ? g->view.nodes[n].serial == number : g->view.nodes[n].id == number)
					target = &g->view.nodes[n];
			int ours = target != NULL && prefix > 0 && strncmp(target->name, park_prefix, prefix) == 0;
			/* "-1" (the default) and names are WirePlumber's or the user's: left alone. */
			if ((target == NULL && end != t->value && *end == '\0' && strcmp(t->value, "-1") != 0) || ours) {
				pw_metadata_set_property(g->metadata, t->subject, t->is_object ? "target.object" : "target.node", NULL, NULL);
				swept++;
			}
		}
		ss_graph_sync_with_server(g);
	}
	pw_thread_loop_unlock(g->loop);
	return swept;
}
