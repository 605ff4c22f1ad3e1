/* One view of PipeWire's registry: nodes, ports and links as announced, with lookups. Meant to
 * serve the graph node, the output and the capture alike (issue 28, item 6). Loop thread only;
 * the exported lookups take the loop's lock and copy out. Stream nodes are also bound for their
 * info, since the registry's global leaves out application.process.id. */
#include "graph_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int reserve(void **items, uint32_t count, uint32_t *capacity, size_t size)
{
	if (count < *capacity)
		return 0;
	uint32_t grown = *capacity == 0 ? 64 : 2 * *capacity;
	void *moved = realloc(*items, grown * size);
	if (moved == NULL)
		return -1;
	*items = moved;
	*capacity = grown;
	return 0;
}

static uint32_t u32(const struct spa_dict *props, const char *key)
{
	const char *value = spa_dict_lookup(props, key);
	return value == NULL ? 0 : (uint32_t)strtoul(value, NULL, 10);
}

static void copy(char *to, size_t size, const struct spa_dict *props, const char *key)
{
	const char *value = spa_dict_lookup(props, key);
	snprintf(to, size, "%s", value != NULL ? value : "");
}

void ss_view_clear(struct ss_view *view)
{
	free(view->nodes);
	free(view->ports);
	free(view->links);
	memset(view, 0, sizeof(*view));
}

struct ss_pw_graph_node_info *ss_view_node(struct ss_view *view, uint32_t id)
{
	for (uint32_t i = 0; i < view->node_count; i++)
		if (view->nodes[i].id == id)
			return &view->nodes[i];
	return NULL;
}

struct ss_pw_graph_node_info *ss_view_node_named(struct ss_view *view, const char *name)
{
	for (uint32_t i = 0; i < view->node_count; i++)
		if (strcmp(view->nodes[i].name, name) == 0)
			return &view->nodes[i];
	return NULL;
}

int ss_view_add(struct ss_view *view, uint32_t id, const char *type, const struct spa_dict *props)
{
	if (props == NULL)
		return 0;
	if (strcmp(type, PW_TYPE_INTERFACE_Node) == 0) {
		if (reserve((void **)&view->nodes, view->node_count, &view->node_capacity, sizeof(*view->nodes)) < 0)
			return 0;
		struct ss_pw_graph_node_info *node = &view->nodes[view->node_count++];
		memset(node, 0, sizeof(*node));
		node->id = id;
		const char *serial = spa_dict_lookup(props, PW_KEY_OBJECT_SERIAL);
		node->serial = serial != NULL ? strtoull(serial, NULL, 10) : 0;
		node->process_id = (int32_t)u32(props, PW_KEY_APP_PROCESS_ID);
		copy(node->media_class, sizeof(node->media_class), props, PW_KEY_MEDIA_CLASS);
		copy(node->name, sizeof(node->name), props, PW_KEY_NODE_NAME);
		return 1;
	}
	if (strcmp(type, PW_TYPE_INTERFACE_Port) == 0) {
		if (reserve((void **)&view->ports, view->port_count, &view->port_capacity, sizeof(*view->ports)) < 0)
			return 0;
		struct ss_view_port *port = &view->ports[view->port_count++];
		memset(port, 0, sizeof(*port));
		port->info.id = id;
		port->info.node = u32(props, PW_KEY_NODE_ID);
		const char *direction = spa_dict_lookup(props, PW_KEY_PORT_DIRECTION);
		port->info.is_output = direction != NULL && strcmp(direction, "out") == 0;
		copy(port->info.channel, sizeof(port->info.channel), props, PW_KEY_AUDIO_CHANNEL);
		copy(port->info.name, sizeof(port->info.name), props, PW_KEY_PORT_NAME);
		return 2;
	}
	if (strcmp(type, PW_TYPE_INTERFACE_Link) == 0) {
		if (reserve((void **)&view->links, view->link_count, &view->link_capacity, sizeof(*view->links)) < 0)
			return 0;
		view->links[view->link_count++] = (struct ss_pw_graph_link_info){
			.id = id, .output_node = u32(props, PW_KEY_LINK_OUTPUT_NODE), .output_port = u32(props, PW_KEY_LINK_OUTPUT_PORT),
			.input_node = u32(props, PW_KEY_LINK_INPUT_NODE), .input_port = u32(props, PW_KEY_LINK_INPUT_PORT) };
		return 3;
	}
	return 0;
}

int ss_view_remove(struct ss_view *view, uint32_t id)
{
	for (uint32_t i = 0; i < view->node_count; i++)
		if (view->nodes[i].id == id) {
			view->nodes[i] = view->nodes[--view->node_count];
			return 1;
		}
	for (uint32_t i = 0; i < view->port_count; i++)
		if (view->ports[i].info.id == id) {
			view->ports[i] = view->ports[--view->port_count];
			return 2;
		}
	for (uint32_t i = 0; i < view->link_count; i++)
		if (view->links[i].id == id) {
			view->links[i] = view->links[--view->link_count];
			return 3;
		}
	return 0;
}

/* ---- Stream nodes' info: application.process.id (0 until it arrives). ---- */

static void on_node_info(void *data, const struct pw_node_info *info)
{
	struct ss_node_binding *binding = data;
	const char *pid = info->props != NULL ? spa_dict_lookup(info->props, PW_KEY_APP_PROCESS_ID) : NULL;
	struct ss_pw_graph_node_info *node = ss_view_node(&binding->graph->view, binding->id);
	if (pid != NULL && node != NULL)
		node->process_id = (int32_t)strtol(pid, NULL, 10);
}

static const struct pw_node_events node_events = { PW_VERSION_NODE_EVENTS, .info = on_node_info };

void ss_view_bind_stream(struct ss_pw_graph *g, uint32_t id)
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
void ss_view_unbind(struct ss_pw_graph *g, uint32_t id)
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

int ss_pw_graph_node(ss_pw_graph *g, uint32_t id, struct ss_pw_graph_node_info *info)
{
	pw_thread_loop_lock(g->loop);
	struct ss_pw_graph_node_info *node = ss_view_node(&g->view, id);
	if (node != NULL)
		*info = *node;
	pw_thread_loop_unlock(g->loop);
	return node != NULL ? 0 : -1;
}

uint32_t ss_pw_graph_find_node(ss_pw_graph *g, const char *name)
{
	pw_thread_loop_lock(g->loop);
	struct ss_pw_graph_node_info *node = ss_view_node_named(&g->view, name);
	uint32_t id = node != NULL ? node->id : 0;
	pw_thread_loop_unlock(g->loop);
	return id;
}

uint32_t ss_pw_graph_nodes(ss_pw_graph *g, const char *media_class, struct ss_pw_graph_node_info *out, uint32_t capacity)
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

uint32_t ss_pw_graph_ports(ss_pw_graph *g, uint32_t node, struct ss_pw_graph_port_info *out, uint32_t capacity)
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

uint32_t ss_pw_graph_links(ss_pw_graph *g, uint32_t node, struct ss_pw_graph_link_info *out, uint32_t capacity)
{
	uint32_t found = 0;
	pw_thread_loop_lock(g->loop);
	for (uint32_t i = 0; i < g->view.link_count; i++) {
		struct ss_pw_graph_link_info *link = &g->view.links[i];
		if (node == 0 || link->output_node == node || link->input_node == node) {
			if (found < capacity)
				out[found] = *link;
			found++;
		}
	}
	pw_thread_loop_unlock(g->loop);
	return found;
}
