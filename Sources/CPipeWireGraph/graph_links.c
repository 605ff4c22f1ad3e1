/* The graph node's operations: links into the port pool and to the sink, the park sink (loop
 * thread; each exported one takes the loop's lock). The metadata targets: graph_metadata.c. */
#include "graph_internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- Links (link-factory, object.linger=false: they die with our connection). ---- */

static struct pw_proxy *make_link(struct ss_pw_graph *g, uint32_t out_node, uint32_t out_port, uint32_t in_node, uint32_t in_port,
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

/* An output link of ours and its state, kept in the link proxy's own memory (it goes with the
 * proxy). Until the server says a link is active, the sink does not take what the port holds:
 * while it merges our node into its driver's cycle (waking, the app's parking sink drove us),
 * a cycle written then was lost — 185 frames of a short sound after a rest. */
struct ss_output_link {
	struct ss_pw_graph *graph;
	struct spa_hook listener;
	uint32_t channel;
	int active;
};

/* The outputs with an active link (loop thread), for the data thread: only they are live. */
static void update_active_outputs(struct ss_pw_graph *g)
{
	uint32_t active = 0;
	for (uint32_t i = 0; i < g->out_link_count; i++) {
		struct ss_output_link *link = g->out_links[i] != NULL ? pw_proxy_get_user_data(g->out_links[i]) : NULL;
		if (link != NULL && link->active)
			active |= 1u << link->channel;
	}
	__atomic_store_n(&g->active_outputs, active, __ATOMIC_RELEASE);
}

static void on_output_link_info(void *data, const struct pw_link_info *info)
{
	struct ss_output_link *link = data;
	if (!(info->change_mask & PW_LINK_CHANGE_MASK_STATE))
		return;
	link->active = info->state == PW_LINK_STATE_ACTIVE;
	update_active_outputs(link->graph);
}

static const struct pw_link_events output_link_events = { PW_VERSION_LINK_EVENTS, .info = on_output_link_info };

static struct pw_proxy *make_output_link(struct ss_pw_graph *g, uint32_t own, uint32_t channel, uint32_t sink, uint32_t port)
{
	struct pw_proxy *proxy = make_link(g, own, g->out_ids[channel], sink, port, sizeof(struct ss_output_link));
	if (proxy == NULL)
		return NULL;
	struct ss_output_link *link = pw_proxy_get_user_data(proxy);
	*link = (struct ss_output_link){ .graph = g, .channel = channel };
	pw_link_add_listener((struct pw_link *)proxy, &link->listener, &output_link_events, link);
	return proxy;
}

static void destroy_output_link(struct pw_proxy *proxy)
{
	if (proxy == NULL)
		return;
	spa_hook_remove(&((struct ss_output_link *)pw_proxy_get_user_data(proxy))->listener);
	pw_proxy_destroy(proxy);
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

void ss_graph_unlink_outputs(struct ss_pw_graph *g)
{
	__atomic_store_n(&g->linked_mask, 0, __ATOMIC_RELEASE);
	ss_graph_store_latency(g, -1);
	for (uint32_t i = 0; i < g->out_link_count; i++) {
		destroy_output_link(g->out_links[i]);
		g->out_links[i] = NULL;
	}
	g->out_link_count = 0;
	update_active_outputs(g);
	g->linked_sink = 0;
	g->linked_sink_name[0] = '\0';
}

/* The sink wanted: the default's node.name, or the named one (or the one of that object.serial). */
static struct ss_pw_graph_node_info *wanted_sink(struct ss_pw_graph *g)
{
	const char *name = g->follow_default ? g->default_sink : g->sink_name;
	if (name[0] == '\0')
		return NULL;
	struct ss_pw_graph_node_info *sink = ss_view_node_named(&g->view, name);
	if (sink != NULL || strspn(name, "0123456789") != strlen(name))
		return sink;
	unsigned long long serial = strtoull(name, NULL, 10);
	for (uint32_t i = 0; i < g->view.node_count; i++)
		if (g->view.nodes[i].serial == serial)
			return &g->view.nodes[i];
	return NULL;
}

/* The named sink is not there: said once (with the sinks there are) until our outputs are linked. */
static void report_missing_sink(struct ss_pw_graph *g)
{
	if (g->failure_reported || g->follow_default || !g->registry_synced)
		return;
	g->failure_reported = 1;
	char message[512];
	int used = snprintf(message, sizeof(message), "no sink named \"%s\"; available sinks:", g->sink_name);
	const char *separator = " ";
	for (uint32_t i = 0; i < g->view.node_count && used > 0 && (size_t)used < sizeof(message); i++)
		if (strcmp(g->view.nodes[i].media_class, "Audio/Sink") == 0) {
			used += snprintf(message + used, sizeof(message) - used, "%s%s", separator, g->view.nodes[i].name);
			separator = ", ";
		}
	ss_graph_emit(g, SS_PW_GRAPH_FAILED, 0, message);
}

/* A port went: our output links to it are gone with it (the sink's ports announced anew, after
 * the session manager reconfigured it, are linked as they come). */
void ss_graph_port_gone(struct ss_pw_graph *g, uint32_t port)
{
	for (uint32_t i = 0; i < g->out_link_count; i++)
		if (g->out_link_port[i] == port) {
			destroy_output_link(g->out_links[i]);
			g->out_link_count--;
			g->out_links[i] = g->out_links[g->out_link_count];
			g->out_link_port[i] = g->out_link_port[g->out_link_count];
			g->out_link_channel[i] = g->out_link_channel[g->out_link_count];
			g->out_links[g->out_link_count] = NULL;
			i--;
		}
	update_active_outputs(g);
}

static int output_linked(struct ss_pw_graph *g, uint32_t port, uint32_t channel)
{
	for (uint32_t i = 0; i < g->out_link_count; i++)
		if (g->out_link_port[i] == port && g->out_link_channel[i] == channel)
			return 1;
	return 0;
}

/* Our outputs in the mask to the sink's ports of their channels; MONO takes FL and FR, and FC
 * goes to FL and FR when the sink has no FC. Called again as the sink's ports are announced
 * (one by one, and after a restart while the session manager sets the sink up): each port is
 * linked as it comes, so a sink seen with FL only does not stay linked to FL only. */
static void link_outputs_now(struct ss_pw_graph *g, uint32_t own)
{
	for (uint32_t c = 0; c < SS_PW_GRAPH_OUT_CHANNELS; c++)
		if ((g->output_mask & (1u << c)) && g->out_ids[c] == 0)
			return;   /* our ports not all announced yet */
	struct ss_pw_graph_node_info *sink = g->linked_sink != 0 ? ss_view_node(&g->view, g->linked_sink) : wanted_sink(g);
	if (sink == NULL) {
		report_missing_sink(g);
		return;
	}
	int has_center = 0;
	uint32_t mask = __atomic_load_n(&g->linked_mask, __ATOMIC_RELAXED);
	for (uint32_t i = 0; i < g->view.port_count; i++)
		has_center |= g->view.ports[i].info.node == sink->id && !g->view.ports[i].info.is_output
			&& strcmp(g->view.ports[i].info.channel, "FC") == 0;
	for (uint32_t i = 0; i < g->view.port_count && g->out_link_count < SS_OUT_LINKS; i++) {
		struct ss_pw_graph_port_info *port = &g->view.ports[i].info;
		if (port->node != sink->id || port->is_output)
			continue;
		for (uint32_t c = 0; c < SS_PW_GRAPH_OUT_CHANNELS && g->out_link_count < SS_OUT_LINKS; c++) {
			if (!(g->output_mask & (1u << c)) || output_linked(g, port->id, c))
				continue;
			int same = strcmp(port->channel, SS_CHANNELS[c]) == 0;
			int mono = c < 2 && strcmp(port->channel, "MONO") == 0;
			int center = c == 2 && !has_center && (strcmp(port->channel, "FL") == 0 || strcmp(port->channel, "FR") == 0);
			if (same || mono || center) {
				g->out_links[g->out_link_count] = make_output_link(g, own, c, sink->id, port->id);
				g->out_link_port[g->out_link_count] = port->id;
				g->out_link_channel[g->out_link_count++] = c;
				mask |= 1u << c;
			}
		}
	}
	if (g->out_link_count == 0)
		return;   /* its ports not announced yet */
	__atomic_store_n(&g->linked_mask, mask, __ATOMIC_RELEASE);
	if (g->linked_sink != 0)
		return;
	g->linked_sink = sink->id;
	g->failure_reported = 0;
	snprintf(g->linked_sink_name, sizeof(g->linked_sink_name), "%s", sink->name);
	if (g->outage || !g->ever_linked) {
		if (g->outage && g->ever_linked)
			__atomic_add_fetch(&g->reconnects, 1, __ATOMIC_RELAXED);
		g->outage = 0;
		g->attempts = 0;
		g->retry_delay = g->config.retry_initial_seconds;
	}
	g->ever_linked = 1;
	if (g->announce_link) {
		g->announce_link = 0;
		ss_graph_emit(g, SS_PW_GRAPH_OUTPUTS_LINKED, sink->id, sink->name);
	}
}

static struct ss_pw_graph_port_info *find_port(struct ss_pw_graph *g, uint32_t id)
{
	for (uint32_t i = 0; i < g->view.port_count; i++)
		if (g->view.ports[i].info.id == id)
			return &g->view.ports[i].info;
	return NULL;
}

/* An app's ports can be announced again with the same ids and other channels while WirePlumber
 * sets them up (seen under load: our FL input linked to a port that became FR, both channels of
 * the set then L+R). A link of ours whose two ports' channels no longer agree goes. */
static void drop_crossed_links(struct ss_pw_graph *g, uint32_t set, uint32_t own)
{
	for (uint32_t i = 0; i < g->view.link_count; i++) {
		struct ss_pw_graph_link_info *link = &g->view.links[i];
		if (link->output_node != g->set_app[set] || link->input_node != own)
			continue;
		struct ss_pw_graph_port_info *from = find_port(g, link->output_port), *to = find_port(g, link->input_port);
		if (from == NULL || to == NULL || strcmp(from->channel, to->channel) == 0 || strcmp(from->channel, "MONO") == 0)
			continue;
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
		struct ss_pw_graph_port_info *port = &g->view.ports[i].info;
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
		link_outputs_now(g, own);
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
			struct ss_view_port *port = &g->view.ports[i];
			if (port->info.node != g->set_app[s] || !port->info.is_output)
				continue;
			for (int c = 0; c < SS_PW_GRAPH_SET_CHANNELS; c++) {
				int matches = strcmp(port->info.channel, SS_CHANNELS[c]) == 0 || (c < 2 && outputs == 1 && strcmp(port->info.channel, "MONO") == 0);
				if (!matches || !(g->set_mask[s] & (1u << c)) || (port->linked_mask & (1u << c)) || g->in_ids[s][c] == 0
						|| used >= 2 * SS_PW_GRAPH_SET_CHANNELS)
					continue;
				port->linked_mask |= 1u << c;
				g->set_links[s][used++] = make_link(g, g->set_app[s], port->info.id, own, g->in_ids[s][c], 0);
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
	if (ss_view_node(&g->view, app_node) == NULL)
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

void ss_pw_graph_link_outputs(ss_pw_graph *g, const char *sink_name)
{
	pw_thread_loop_lock(g->loop);
	ss_graph_unlink_outputs(g);
	g->outputs_wanted = 1;
	g->failure_reported = 0;
	g->announce_link = 1;
	g->follow_default = sink_name == NULL;
	snprintf(g->sink_name, sizeof(g->sink_name), "%s", sink_name != NULL ? sink_name : "");
	ss_graph_update(g);
	pw_thread_loop_unlock(g->loop);
}

void ss_pw_graph_set_output_mask(ss_pw_graph *g, uint32_t mask)
{
	mask &= (1u << SS_PW_GRAPH_OUT_CHANNELS) - 1;
	pw_thread_loop_lock(g->loop);
	if (mask != 0 && mask != g->output_mask) {
		g->output_mask = mask;
		g->announce_link = 1;
		ss_graph_unlink_outputs(g);
		ss_graph_update(g);
	}
	pw_thread_loop_unlock(g->loop);
}

void ss_pw_graph_set_resting(ss_pw_graph *g, int resting)
{
	pw_thread_loop_lock(g->loop);
	if (!resting != !g->resting) {
		g->resting = resting != 0;
		/* 0.3.65 ignores it (process goes on); 1.x stops scheduling us. */
		if (g->filter != NULL)
			pw_filter_set_active(g->filter, !resting);
		if (resting)
			ss_graph_unlink_outputs(g);
		else
			ss_graph_update(g);
	}
	pw_thread_loop_unlock(g->loop);
}

void ss_pw_graph_linked_sink(ss_pw_graph *g, char *name, uint32_t size)
{
	pw_thread_loop_lock(g->loop);
	snprintf(name, size, "%s", g->linked_sink_name);
	pw_thread_loop_unlock(g->loop);
}

void ss_pw_graph_unlink_outputs(ss_pw_graph *g)
{
	pw_thread_loop_lock(g->loop);
	g->outputs_wanted = 0;
	ss_graph_unlink_outputs(g);
	pw_thread_loop_unlock(g->loop);
}

int ss_graph_make_park_sink(struct ss_pw_graph *g)
{
	struct pw_properties *props = pw_properties_new(
			"factory.name", "support.null-audio-sink", PW_KEY_NODE_NAME, g->park_name,
			PW_KEY_NODE_DESCRIPTION, "SceneSound park sink", PW_KEY_MEDIA_CLASS, "Audio/Sink",
			"audio.channels", "8", "audio.position", "[ FL FR FC LFE RL RR SL SR ]",
			PW_KEY_NODE_VIRTUAL, "true", "monitor.channel-volumes", "true",
			/* Passive: the app's link to it alone does not start the app; our link into
			 * a set, made after it, does, so the set gets the app's first cycle. */
			PW_KEY_NODE_PASSIVE, "true",
			PW_KEY_OBJECT_LINGER, "false", NULL);
	g->park_sink = pw_core_create_object(g->core, "adapter", PW_TYPE_INTERFACE_Node, PW_VERSION_NODE, &props->dict, 0);
	pw_properties_free(props);
	return g->park_sink == NULL ? -errno : 0;
}

int ss_pw_graph_create_park_sink(ss_pw_graph *g, const char *name)
{
	int result = 0;
	pw_thread_loop_lock(g->loop);
	if (g->core == NULL)
		result = -ENOTCONN;
	else if (g->park_sink != NULL)
		result = -EALREADY;
	else {
		snprintf(g->park_name, sizeof(g->park_name), "%s", name);
		result = ss_graph_make_park_sink(g);
		g->park_wanted = result == 0;
	}
	pw_thread_loop_unlock(g->loop);
	return result;
}

void ss_pw_graph_destroy_park_sink(ss_pw_graph *g)
{
	pw_thread_loop_lock(g->loop);
	if (g->park_sink != NULL)
		pw_proxy_destroy(g->park_sink);
	g->park_sink = NULL;
	g->park_id = 0;
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
