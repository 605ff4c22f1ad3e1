/* The graph node's view of the registry (the shared ss_pw_view, fed by graph_events.c): stream
 * nodes bound for their info, since the registry's global leaves out application.process.id,
 * and the exported lookups, which take the loop's lock and copy out. */
#include "graph_internal.h"

#include <stdlib.h>
#include <string.h>

/* ---- Stream nodes' info: application.process.id (0 until it arrives). ---- */

static void on_node_info(void *data, const struct pw_node_info *info)
{
	struct ss_node_binding *binding = data;
	const char *pid = info->props != NULL ? spa_dict_lookup(info->props, PW_KEY_APP_PROCESS_ID) : NULL;
	struct ss_pw_node_info *node = ss_pw_view_node(&binding->graph->view, binding->id);
	if (pid != NULL && node != NULL)
		node->process_id = (int32_t)strtol(pid, NULL, 10);
}

static const struct pw_node_events node_events = { PW_VERSION_NODE_EVENTS, .info = on_node_info };

void ss_graph_bind_stream(struct ss_pw_graph *g, uint32_t id)
{
	struct ss_node_binding *binding = calloc(1, sizeof(*binding));
	if (binding == NULL)
		return;
	binding->proxy = pw_registry_bind(g->registry, id, PW_TYPE_INTERFACE_Node, PW_VERSION_NODE, 0);
	if (binding->proxy == NULL) {
		free(binding);
		return;
	}
	binding->graph = g;
	binding->id = id;
	pw_proxy_add_object_listener(binding->proxy, &binding->listener, &node_events, binding);
	spa_list_append(&g->bindings, &binding->link);
}

/* id 0: all of them. */
void ss_graph_unbind_streams(struct ss_pw_graph *g, uint32_t id)
{
	struct ss_node_binding *binding, *next;
	spa_list_for_each_safe(binding, next, &g->bindings, link) {
		if (id != 0 && binding->id != id)
			continue;
		spa_list_remove(&binding->link);
		spa_hook_remove(&binding->listener);
		pw_proxy_destroy(binding->proxy);
		free(binding);
	}
}

/* ---- Exported lookups: under the loop's lock, copied out. ---- */

int ss_pw_graph_node(ss_pw_graph *g, uint32_t id, struct ss_pw_node_info *info)
{
	pw_thread_loop_lock(g->loop);
	struct ss_pw_node_info *node = ss_pw_view_node(&g->view, id);
	if (node != NULL)
		*info = *node;
	pw_thread_loop_unlock(g->loop);
	return node != NULL ? 0 : -1;
}

uint32_t ss_pw_graph_find_node(ss_pw_graph *g, const char *name)
{
	pw_thread_loop_lock(g->loop);
	struct ss_pw_node_info *node = ss_pw_view_node_named(&g->view, name);
	uint32_t id = node != NULL ? node->id : 0;
	pw_thread_loop_unlock(g->loop);
	return id;
}

uint32_t ss_pw_graph_nodes(ss_pw_graph *g, const char *media_class, struct ss_pw_node_info *out, uint32_t capacity)
{
	uint32_t found = 0;
	pw_thread_loop_lock(g->loop);
	for (uint32_t i = 0; i < g->view.node_count; i++)
		if (media_class == NULL || strcmp(g->view.nodes[i].media_class, media_class) == 0) {
			if (found < capacity)
				out[found] = g->view.nodes[i];
			found++;
		}
	pw_thread_loop_unlock(g->loop);
	return found;
}

uint32_t ss_pw_graph_ports(ss_pw_graph *g, uint32_t node, struct ss_pw_port_info *out, uint32_t capacity)
{
	uint32_t found = 0;
	pw_thread_loop_lock(g->loop);
	for (uint32_t i = 0; i < g->view.port_count; i++)
		if (node == 0 || g->view.ports[i].info.node == node) {
			if (found < capacity)
				out[found] = g->view.ports[i].info;
			found++;
		}
	pw_thread_loop_unlock(g->loop);
	return found;
}

uint32_t ss_pw_graph_links(ss_pw_graph *g, uint32_t node, struct ss_pw_link_info *out, uint32_t capacity)
{
	uint32_t found = 0;
	pw_thread_loop_lock(g->loop);
	for (uint32_t i = 0; i < g->view.link_count; i++) {
		struct ss_pw_link_info *link = &g->view.links[i];
		if (node == 0 || link->output_node == node || link->input_node == node) {
			if (found < capacity)
				out[found] = *link;
			found++;
		}
	}
	pw_thread_loop_unlock(g->loop);
	return found;
}
