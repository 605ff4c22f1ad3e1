/* The graph node's outputs: their links to the sink (the default, or a named one), made as the
 * sink's ports are announced, each followed until the server says it is active; resting (loop
 * thread; each exported operation takes the loop's lock). */
#include "graph_internal.h"

#include <stdio.h>
#include <string.h>

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

/* The outputs with an active link (loop thread), for the data thread: only they are live. The
 * server's activation of a link is a change of our links as our request was (the graph is sorted
 * anew, and the driver may run a cycle without us meanwhile): counted as one. */
static void update_active_outputs(struct ss_pw_graph *g)
{
	uint32_t active = 0;
	for (uint32_t i = 0; i < g->out_link_count; i++) {
		struct ss_output_link *link = g->out_links[i] != NULL ? pw_proxy_get_user_data(g->out_links[i]) : NULL;
		if (link != NULL && link->active)
			active |= 1u << link->channel;
	}
	if (active != __atomic_exchange_n(&g->active_outputs, active, __ATOMIC_ACQ_REL))
		__atomic_add_fetch(&g->output_link_changes, 1, __ATOMIC_RELEASE);
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
	struct pw_proxy *proxy = ss_graph_make_link(g, own, g->out_ids[channel], sink, port, sizeof(struct ss_output_link));
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

void ss_graph_unlink_outputs(struct ss_pw_graph *g)
{
	__atomic_store_n(&g->linked_mask, 0, __ATOMIC_RELEASE);
	__atomic_add_fetch(&g->output_link_changes, 1, __ATOMIC_RELEASE);
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
static struct ss_pw_node_info *wanted_sink(struct ss_pw_graph *g)
{
	const char *name = g->follow_default ? g->default_sink : g->sink_name;
	if (name[0] == '\0')
		return NULL;
	struct ss_pw_node_info *sink = ss_pw_view_node_named(&g->view, name);
	if (sink != NULL || strspn(name, "0123456789") != strlen(name))
		return sink;
	return ss_pw_view_node_with_serial(&g->view, strtoull(name, NULL, 10));
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
void ss_graph_link_outputs_now(struct ss_pw_graph *g, uint32_t own)
{
	for (uint32_t c = 0; c < SS_PW_GRAPH_OUT_CHANNELS; c++)
		if ((g->output_mask & (1u << c)) && g->out_ids[c] == 0)
			return;   /* our ports not all announced yet */
	struct ss_pw_node_info *sink = g->linked_sink != 0 ? ss_pw_view_node(&g->view, g->linked_sink) : wanted_sink(g);
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
		struct ss_pw_port_info *port = &g->view.ports[i].info;
		if (port->node != sink->id || port->is_output)
			continue;
		for (uint32_t c = 0; c < SS_PW_GRAPH_OUT_CHANNELS && g->out_link_count < SS_OUT_LINKS; c++) {
			if (!(g->output_mask & (1u << c)) || output_linked(g, port->id, c))
				continue;
			int same = strcmp(port->channel, SS_CHANNELS[c]) == 0;
			int mono = c < 2 && strcmp(port->channel, "MONO") == 0;
			int center = c == 2 && !has_center && (strcmp(port->channel, "FL") == 0 || strcmp(port->channel, "FR") == 0);
			if (same || mono || center) {
				__atomic_add_fetch(&g->output_link_changes, 1, __ATOMIC_RELEASE);
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

/* ---- The exported operations. ---- */

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
		/* Unlinked, the node is left out of every cycle until an app linked into a set plays
		 * (its link starts both). Not made inactive: an inactive node holds an app whose only
		 * other link goes to our park sink, which never runs, and nothing would wake us. */
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

void ss_pw_graph_default_sink(ss_pw_graph *g, char *name, uint32_t size)
{
	pw_thread_loop_lock(g->loop);
	snprintf(name, size, "%s", g->default_sink);
	pw_thread_loop_unlock(g->loop);
}

void ss_pw_graph_unlink_outputs(ss_pw_graph *g)
{
	pw_thread_loop_lock(g->loop);
	g->outputs_wanted = 0;
	ss_graph_unlink_outputs(g);
	pw_thread_loop_unlock(g->loop);
}
