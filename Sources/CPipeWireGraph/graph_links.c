/* The graph node's operations: links into the port pool, the park sink (loop thread; each
 * exported one takes the loop's lock). Our outputs' links to the sink: graph_outputs.c; the
 * metadata targets: graph_metadata.c. */
#include "graph_internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- Links (link-factory, object.linger=false: they die with our connection). ---- */

struct pw_proxy *ss_graph_make_link(struct ss_pw_graph *g, uint32_t out_node, uint32_t out_port, uint32_t in_node, uint32_t in_port,
		size_t user_data_size)
{
	struct pw_properties *props = pw_properties_new(PW_KEY_OBJECT_LINGER, "false", NULL);
	if (props == NULL)
		return NULL;
	pw_properties_setf(props, PW_KEY_LINK_OUTPUT_NODE, "%u", out_node);
	pw_properties_setf(props, PW_KEY_LINK_OUTPUT_PORT, "%u", out_port);
	pw_properties_setf(props, PW_KEY_LINK_INPUT_NODE, "%u", in_node);
	pw_properties_setf(props, PW_KEY_LINK_INPUT_PORT, "%u", in_port);
	struct pw_proxy *proxy = pw_core_create_object(g->core, "link-factory", PW_TYPE_INTERFACE_Link, PW_VERSION_LINK,
			&props->dict, user_data_size);
	pw_properties_free(props);
	return proxy;
}

void ss_graph_destroy_proxies(struct pw_proxy **proxies, int count)
{
	for (int i = 0; i < count; i++)
		if (proxies[i] != NULL) {
			pw_proxy_destroy(proxies[i]);
			proxies[i] = NULL;
		}
}

void ss_graph_free_set(struct ss_pw_graph *g, uint32_t set)
{
	__atomic_store_n(&g->set_in_use[set], 0, __ATOMIC_RELEASE);
	ss_graph_destroy_proxies(g->set_links[set], 2 * SS_PW_GRAPH_SET_CHANNELS);
	for (uint32_t i = 0; i < g->view.port_count; i++)
		if (g->view.ports[i].info.node == g->set_app[set])
			g->view.ports[i].linked_mask = 0;
	g->set_app[set] = 0;
	g->set_mask[set] = 0;
}

/* An app's ports can be announced again with the same ids and other channels while WirePlumber
 * sets them up (seen under load: our FL input linked to a port that became FR, both channels of
 * the set then L+R). A link of ours whose two ports' channels no longer agree goes. */
static void drop_crossed_links(struct ss_pw_graph *g, uint32_t set, uint32_t own)
{
	for (uint32_t i = 0; i < g->view.link_count; i++) {
		struct ss_pw_link_info *link = &g->view.links[i];
		if (link->output_node == g->set_app[set] && link->input_node == own && ss_pw_view_link_is_crossed(&g->view, link))
			pw_registry_destroy(g->registry, link->id);
	}
}

static int linked_elsewhere(struct ss_pw_graph *g, uint32_t app, uint32_t own)
{
	for (uint32_t i = 0; i < g->view.link_count; i++)
		if (g->view.links[i].output_node == app && g->view.links[i].input_node != own)
			return 1;
	return 0;
}

/* Whatever the graph now allows: our ports' ids, our outputs to the sink, apps' new ports. */
void ss_graph_update(struct ss_pw_graph *g)
{
	uint32_t own = g->node_id;
	if (own == 0 || g->core == NULL)
		return;
	uint32_t known = 0;
	for (uint32_t i = 0; i < g->view.port_count; i++) {
		struct ss_pw_port_info *port = &g->view.ports[i].info;
		unsigned set;
		char channel[8];
		if (port->node != own)
			continue;
		if (sscanf(port->name, "in_%u_%7s", &set, channel) == 2 && set < g->config.input_sets) {
			for (int c = 0; c < SS_PW_GRAPH_SET_CHANNELS; c++)
				if (strcmp(channel, SS_CHANNELS[c]) == 0) {
					g->in_ids[set][c] = port->id;
					known++;
				}
		} else if (sscanf(port->name, "out_%7s", channel) == 1) {
			for (int c = 0; c < SS_PW_GRAPH_OUT_CHANNELS; c++)
				if (strcmp(channel, SS_CHANNELS[c]) == 0) {
					g->out_ids[c] = port->id;
					known++;
				}
		}
	}
	if (!g->ready_reported && known == g->config.input_sets * SS_PW_GRAPH_SET_CHANNELS + SS_PW_GRAPH_OUT_CHANNELS) {
		g->ready_reported = 1;
		ss_graph_emit(g, SS_PW_GRAPH_NODE_READY, own, NULL);
	}
	if (g->outputs_wanted && !g->resting)
		ss_graph_link_outputs_now(g, own);
	for (uint32_t s = 0; s < g->config.input_sets; s++) {
		/* Only once the session manager has linked the app (to the park sink, or wherever):
		 * WirePlumber 0.4.13 leaves an app that already has links of ours unlinked, and the
		 * app then never plays (seen under load, 1 run in 12). */
		if (g->set_app[s] == 0 || !linked_elsewhere(g, g->set_app[s], own))
			continue;
		drop_crossed_links(g, s, own);
		/* MONO goes to FL and FR only from an app with that one output port: two ports both
		 * MONO (seen while the app's ports were being set up, under load) summed L+R into
		 * both channels of the set. */
		int outputs = 0;
		for (uint32_t i = 0; i < g->view.port_count; i++)
			outputs += g->view.ports[i].info.node == g->set_app[s] && g->view.ports[i].info.is_output;
		int used = 0;
		while (used < 2 * SS_PW_GRAPH_SET_CHANNELS && g->set_links[s][used] != NULL)
			used++;
		for (uint32_t i = 0; i < g->view.port_count; i++) {
			struct ss_pw_view_port *port = &g->view.ports[i];
			if (port->info.node != g->set_app[s] || !port->info.is_output)
				continue;
			for (int c = 0; c < SS_PW_GRAPH_SET_CHANNELS; c++) {
				int matches = strcmp(port->info.channel, SS_CHANNELS[c]) == 0 || (c < 2 && outputs == 1 && strcmp(port->info.channel, "MONO") == 0);
				if (!matches || !(g->set_mask[s] & (1u << c)) || (port->linked_mask & (1u << c)) || g->in_ids[s][c] == 0
						|| used >= 2 * SS_PW_GRAPH_SET_CHANNELS)
					continue;
				port->linked_mask |= 1u << c;
				g->set_links[s][used++] = ss_graph_make_link(g, g->set_app[s], port->info.id, own, g->in_ids[s][c], 0);
			}
		}
	}
}

/* ---- The exported operations. ---- */

int ss_pw_graph_link_set(ss_pw_graph *g, uint32_t set, uint32_t app_node, uint32_t channel_mask)
{
	if (set >= g->config.input_sets)
		return -EINVAL;
	int result = 0;
	pw_thread_loop_lock(g->loop);
	if (ss_pw_view_node(&g->view, app_node) == NULL)
		result = -ENOENT;
	else if (g->set_app[set] != 0 && g->set_app[set] != app_node)
		result = -EBUSY;
	else if (g->set_app[set] == 0) {
		g->set_app[set] = app_node;
		g->set_mask[set] = channel_mask != 0 ? channel_mask : 0xff;
		__atomic_store_n(&g->set_in_use[set], 1, __ATOMIC_RELEASE);
		ss_graph_update(g);
	}
	pw_thread_loop_unlock(g->loop);
	return result;
}

void ss_pw_graph_unlink_set(ss_pw_graph *g, uint32_t set)
{
	if (set >= g->config.input_sets)
		return;
	pw_thread_loop_lock(g->loop);
	int linked = 0;
	for (int i = 0; i < 2 * SS_PW_GRAPH_SET_CHANNELS; i++)
		linked |= g->set_links[set][i] != NULL;
	ss_graph_free_set(g, set);
	/* Returns once the server has destroyed the links, so that whatever the caller does to the
	 * app next (moving it to another sink) comes after. PipeWire before 0.3.72 can crash when
	 * a link is destroyed just after its app node was suspended by such a move: a link gone
	 * back to "init" with its activation still set is activated again while being freed
	 * (fixed upstream by "impl-link: block some actions when destroyed"). */
	if (linked)
		ss_graph_sync_with_server(g);
	pw_thread_loop_unlock(g->loop);
}

uint32_t ss_pw_graph_set_app(ss_pw_graph *g, uint32_t set)
{
	if (set >= g->config.input_sets)
		return 0;
	pw_thread_loop_lock(g->loop);
	uint32_t app = g->set_app[set];
	pw_thread_loop_unlock(g->loop);
	return app;
}

/* An Audio/Sink of our own connection, exported as a stream that never becomes active: a node
 * that is not active is left out when the server works out which nodes run, so an app whose only
 * other link goes to it is not started by that link, on 0.3.65 and 1.x alike, until our link into
 * a set does: the set gets the app's first cycle. (A passive null sink held apps only before
 * PipeWire 0.3.68: from then on a link is passive only towards a node that can suspend.) No
 * process callback: it never runs. It dies with our connection, and WirePlumber moves its apps to
 * the default sink. */
int ss_graph_make_park_sink(struct ss_pw_graph *g)
{
	struct pw_properties *props = pw_properties_new(
			PW_KEY_NODE_NAME, g->park_name, PW_KEY_NODE_DESCRIPTION, "SceneSound park sink",
			PW_KEY_MEDIA_CLASS, "Audio/Sink", PW_KEY_MEDIA_TYPE, "Audio",
			PW_KEY_NODE_VIRTUAL, "true", PW_KEY_NODE_PASSIVE, "true", NULL);
	if (props == NULL)
		return -errno;
	if (g->park_properties != NULL)
		pw_properties_update_string(props, g->park_properties, strlen(g->park_properties));
	/* What pulse clients and mixers show as the sink's name. */
	const char *description = pw_properties_get(props, "device.description");
	if (description != NULL)
		pw_properties_set(props, PW_KEY_NODE_DESCRIPTION, description);
	g->park_sink = pw_stream_new(g->core, g->park_name, props);
	if (g->park_sink == NULL)
		return -errno;
	uint8_t buffer[512];
	struct spa_pod_builder builder = SPA_POD_BUILDER_INIT(buffer, sizeof(buffer));
	struct spa_audio_info_raw info = { .format = SPA_AUDIO_FORMAT_F32, .rate = g->config.rate_hz,
	                                   .channels = SS_PW_GRAPH_SET_CHANNELS };
	for (int c = 0; c < SS_PW_GRAPH_SET_CHANNELS; c++)
		info.position[c] = SS_CHANNEL_POSITIONS[c];
	const struct spa_pod *params[1] = { spa_format_audio_raw_build(&builder, SPA_PARAM_EnumFormat, &info) };
	int result = pw_stream_connect(g->park_sink, PW_DIRECTION_INPUT, PW_ID_ANY,
			PW_STREAM_FLAG_INACTIVE | PW_STREAM_FLAG_MAP_BUFFERS, params, 1);
	if (result < 0) {
		pw_stream_destroy(g->park_sink);
		g->park_sink = NULL;
	}
	return result;
}

void ss_graph_destroy_park_sink(struct ss_pw_graph *g)
{
	if (g->park_sink != NULL)
		pw_stream_destroy(g->park_sink);
	g->park_sink = NULL;
	g->park_id = 0;
}

int ss_pw_graph_create_park_sink(ss_pw_graph *g, const char *name, const char *properties)
{
	int result = 0;
	pw_thread_loop_lock(g->loop);
	if (g->core == NULL)
		result = -ENOTCONN;
	else if (g->park_sink != NULL)
		result = -EALREADY;
	else {
		snprintf(g->park_name, sizeof(g->park_name), "%s", name);
		free(g->park_properties);
		g->park_properties = properties != NULL && properties[0] != '\0' ? strdup(properties) : NULL;
		result = ss_graph_make_park_sink(g);
		g->park_wanted = result == 0;
	}
	pw_thread_loop_unlock(g->loop);
	return result;
}

void ss_pw_graph_destroy_park_sink(ss_pw_graph *g)
{
	pw_thread_loop_lock(g->loop);
	ss_graph_destroy_park_sink(g);
	g->park_wanted = 0;
	pw_thread_loop_unlock(g->loop);
}

uint32_t ss_pw_graph_park_sink_id(ss_pw_graph *g)
{
	pw_thread_loop_lock(g->loop);
	uint32_t id = g->park_id;
	pw_thread_loop_unlock(g->loop);
	return id;
}

int ss_pw_graph_destroy_link(ss_pw_graph *g, uint32_t link)
{
	int result = -ENOENT;
	pw_thread_loop_lock(g->loop);
	for (uint32_t i = 0; i < g->view.link_count; i++)
		if (g->view.links[i].id == link && g->registry != NULL) {
			pw_registry_destroy(g->registry, link);
			result = 0;
			break;
		}
	pw_thread_loop_unlock(g->loop);
	return result;
}
