/* The graph node's connection events: the registry's globals into the one view (and what they
 * start: our ports known, apps announced, links followed), the core's answers and errors (a lost
 * connection reported once per outage, retried). Loop thread. */
#include "graph_internal.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>


static void on_global(void *data, uint32_t id, uint32_t permissions, const char *type, uint32_t version, const struct spa_dict *props)
{
	struct ss_pw_graph *g = data;
	(void)permissions; (void)version;
	if (strcmp(type, PW_TYPE_INTERFACE_Metadata) == 0) {
		const char *name = props != NULL ? spa_dict_lookup(props, PW_KEY_METADATA_NAME) : NULL;
		if (name != NULL && strcmp(name, "default") == 0 && g->metadata == NULL) {
			g->metadata = pw_registry_bind(g->registry, id, type, PW_VERSION_METADATA, 0);
			if (g->metadata != NULL) {
				g->metadata_id = id;
				pw_metadata_add_listener(g->metadata, &g->metadata_listener, &ss_graph_metadata_events, g);
			}
		}
		return;
	}
	/* Its binding of the metadata may hide a default chosen meanwhile (graph_metadata.c). The
	 * clients there at connection come before our own first binding: nothing hidden. */
	if (strcmp(type, PW_TYPE_INTERFACE_Client) == 0 && g->registry_synced)
		ss_graph_reread_default(g, 0.25);
	int kind = ss_pw_view_add(&g->view, id, type, props);
	if (kind == 1 || kind == 3)
		ss_graph_note_graph_change(g);
	if (kind == 1) {
		struct ss_pw_node_info *node = ss_pw_view_node(&g->view, id);
		if (g->park_sink != NULL && strcmp(node->name, g->park_name) == 0) {
			g->park_id = id;
			ss_graph_emit(g, SS_PW_GRAPH_PARK_SINK_READY, id, node->name);
		} else if (strcmp(node->media_class, "Audio/Sink") == 0) {
			ss_graph_reread_default(g, 0.25);   /* the session manager may make it the default */
		} else if (strncmp(node->media_class, "Stream/", 7) == 0 && strcmp(node->name, g->node_name) != 0) {
			ss_graph_bind_stream(g, id);
			if (strcmp(node->media_class, "Stream/Output/Audio") == 0)
				ss_graph_emit(g, SS_PW_GRAPH_APP_APPEARED, id, node->name);
		}
	} else if (kind == 3) {
		struct ss_pw_link_info *link = &g->view.links[g->view.link_count - 1];
		char detail[64];
		snprintf(detail, sizeof(detail), "%u:%u->%u:%u", link->output_node, link->output_port, link->input_node, link->input_port);
		ss_graph_emit(g, SS_PW_GRAPH_LINK_ADDED, id, detail);
	}
	ss_graph_update(g);
}

static void on_global_remove(void *data, uint32_t id)
{
	struct ss_pw_graph *g = data;
	if (g->metadata != NULL && id == g->metadata_id) {
		ss_graph_metadata_gone(g);
		return;
	}
	struct ss_pw_node_info *node = ss_pw_view_node(&g->view, id);
	int was_app = node != NULL && strcmp(node->media_class, "Stream/Output/Audio") == 0;
	int kind = ss_pw_view_remove(&g->view, id);
	if (kind == 1 || kind == 3)
		ss_graph_note_graph_change(g);
	if (kind == 1) {
		ss_graph_unbind_streams(g, id);
		for (uint32_t s = 0; s < g->config.input_sets; s++)
			if (g->set_app[s] == id)
				ss_graph_free_set(g, s);
		for (uint32_t i = 0; i < g->targeted_count; i++)
			if (g->targeted[i] == id)   /* the server drops a gone node's metadata */
				g->targeted[i--] = g->targeted[--g->targeted_count];
		if (id == g->park_id)
			g->park_id = 0;
		if (id == g->linked_sink)
			ss_graph_unlink_outputs(g);
		if (was_app)
			ss_graph_emit(g, SS_PW_GRAPH_APP_GONE, id, NULL);
	} else if (kind == 2) {
		ss_graph_port_gone(g, id);
	} else if (kind == 3) {
		ss_graph_emit(g, SS_PW_GRAPH_LINK_REMOVED, id, NULL);
	} else if (kind == 0) {
		/* A client (or another object we do not view) went: one that goes while its binding
		 * awaits the pong leaves every older binding deaf for good (graph_metadata.c). */
		ss_graph_reread_default(g, 0.25);
	}
	ss_graph_update(g);
}

const struct pw_registry_events ss_graph_registry_events = {
	PW_VERSION_REGISTRY_EVENTS, .global = on_global, .global_remove = on_global_remove,
};

static void on_core_done(void *data, uint32_t id, int seq)
{
	struct ss_pw_graph *g = data;
	if (id == PW_ID_CORE && seq == g->sync_seq) {
		g->synced = 1;
		pw_thread_loop_signal(g->loop, false);
	}
	if (id == PW_ID_CORE && seq == g->reread_seq)
		ss_graph_reread_done(g);
	if (id == PW_ID_CORE && seq == g->registry_seq && !g->registry_synced) {
		g->registry_synced = 1;   /* every global there was at connection is known */
		if (g->default_sink[0] == '\0')
			ss_graph_reread_default(g, 0.25);
		ss_graph_update(g);
	}
}

void ss_graph_lost(struct ss_pw_graph *g, const char *why)
{
	g->disconnected = 1;
	__atomic_store_n(&g->linked_mask, 0, __ATOMIC_RELEASE);
	ss_graph_store_latency(g, -1);
	if (!g->outage) {
		g->outage = 1;
		ss_graph_emit(g, SS_PW_GRAPH_DISCONNECTED, 0, why);
	}
	ss_graph_schedule_retry(g);
}

static void on_core_error(void *data, uint32_t id, int seq, int res, const char *message)
{
	struct ss_pw_graph *g = data;
	(void)seq;
	if (id != PW_ID_CORE) {
		ss_graph_emit(g, SS_PW_GRAPH_ERROR, id, message);
	} else if (res == -EPIPE && !g->disconnected) {
		g->synced = 1;
		pw_thread_loop_signal(g->loop, false);
		ss_graph_lost(g, message);
	}
}

const struct pw_core_events ss_graph_core_events = { PW_VERSION_CORE_EVENTS, .done = on_core_done, .error = on_core_error };
