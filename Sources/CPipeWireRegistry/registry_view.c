/* The registry view (header: pipewire_registry.h). */
#include "pipewire_registry.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <pipewire/pipewire.h>

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

void ss_pw_view_clear(struct ss_pw_view *view)
{
	free(view->nodes);
	free(view->ports);
	free(view->links);
	memset(view, 0, sizeof(*view));
}

int ss_pw_view_add(struct ss_pw_view *view, uint32_t id, const char *type, const struct spa_dict *props)
{
	if (props == NULL)
		return SS_PW_VIEW_NONE;
	if (strcmp(type, PW_TYPE_INTERFACE_Node) == 0) {
		if (reserve((void **)&view->nodes, view->node_count, &view->node_capacity, sizeof(*view->nodes)) < 0)
			return SS_PW_VIEW_NONE;
		struct ss_pw_node_info *node = &view->nodes[view->node_count++];
		memset(node, 0, sizeof(*node));
		node->id = id;
		const char *serial = spa_dict_lookup(props, PW_KEY_OBJECT_SERIAL);
		node->serial = serial != NULL ? strtoull(serial, NULL, 10) : 0;
		node->process_id = (int32_t)u32(props, PW_KEY_APP_PROCESS_ID);
		copy(node->media_class, sizeof(node->media_class), props, PW_KEY_MEDIA_CLASS);
		copy(node->name, sizeof(node->name), props, PW_KEY_NODE_NAME);
		return SS_PW_VIEW_NODE;
	}
	if (strcmp(type, PW_TYPE_INTERFACE_Port) == 0) {
		if (reserve((void **)&view->ports, view->port_count, &view->port_capacity, sizeof(*view->ports)) < 0)
			return SS_PW_VIEW_NONE;
		struct ss_pw_view_port *port = &view->ports[view->port_count++];
		memset(port, 0, sizeof(*port));
		port->info.id = id;
		port->info.node = u32(props, PW_KEY_NODE_ID);
		const char *direction = spa_dict_lookup(props, PW_KEY_PORT_DIRECTION);
		port->info.is_output = direction != NULL && strcmp(direction, "out") == 0;
		copy(port->info.channel, sizeof(port->info.channel), props, PW_KEY_AUDIO_CHANNEL);
		copy(port->info.name, sizeof(port->info.name), props, PW_KEY_PORT_NAME);
		return SS_PW_VIEW_PORT;
	}
	if (strcmp(type, PW_TYPE_INTERFACE_Link) == 0) {
		if (reserve((void **)&view->links, view->link_count, &view->link_capacity, sizeof(*view->links)) < 0)
			return SS_PW_VIEW_NONE;
		view->links[view->link_count++] = (struct ss_pw_link_info){
			.id = id, .output_node = u32(props, PW_KEY_LINK_OUTPUT_NODE), .output_port = u32(props, PW_KEY_LINK_OUTPUT_PORT),
			.input_node = u32(props, PW_KEY_LINK_INPUT_NODE), .input_port = u32(props, PW_KEY_LINK_INPUT_PORT) };
		return SS_PW_VIEW_LINK;
	}
	return SS_PW_VIEW_NONE;
}

int ss_pw_view_remove(struct ss_pw_view *view, uint32_t id)
{
	for (uint32_t i = 0; i < view->node_count; i++)
		if (view->nodes[i].id == id) {
			view->nodes[i] = view->nodes[--view->node_count];
			return SS_PW_VIEW_NODE;
		}
	for (uint32_t i = 0; i < view->port_count; i++)
		if (view->ports[i].info.id == id) {
			view->ports[i] = view->ports[--view->port_count];
			return SS_PW_VIEW_PORT;
		}
	for (uint32_t i = 0; i < view->link_count; i++)
		if (view->links[i].id == id) {
			view->links[i] = view->links[--view->link_count];
			return SS_PW_VIEW_LINK;
		}
	return SS_PW_VIEW_NONE;
}

struct ss_pw_node_info *ss_pw_view_node(const struct ss_pw_view *view, uint32_t id)
{
	for (uint32_t i = 0; i < view->node_count; i++)
		if (view->nodes[i].id == id)
			return &view->nodes[i];
	return NULL;
}

struct ss_pw_node_info *ss_pw_view_node_named(const struct ss_pw_view *view, const char *name)
{
	for (uint32_t i = 0; i < view->node_count; i++)
		if (strcmp(view->nodes[i].name, name) == 0)
			return &view->nodes[i];
	return NULL;
}

struct ss_pw_node_info *ss_pw_view_node_with_serial(const struct ss_pw_view *view, uint64_t serial)
{
	for (uint32_t i = 0; i < view->node_count; i++)
		if (view->nodes[i].serial == serial)
			return &view->nodes[i];
	return NULL;
}

struct ss_pw_port_info *ss_pw_view_port(const struct ss_pw_view *view, uint32_t id)
{
	for (uint32_t i = 0; i < view->port_count; i++)
		if (view->ports[i].info.id == id)
			return &view->ports[i].info;
	return NULL;
}

static int is_position(const char *channel)
{
	static const char *const positions[] = { "FL", "FR", "FC", "LFE", "RL", "RR", "SL", "SR", "RC", "FLC", "FRC" };
	for (size_t i = 0; i < SPA_N_ELEMENTS(positions); i++)
		if (strcmp(channel, positions[i]) == 0)
			return 1;
	return 0;
}

int ss_pw_view_link_is_crossed(const struct ss_pw_view *view, const struct ss_pw_link_info *link)
{
	const struct ss_pw_port_info *from = ss_pw_view_port(view, link->output_port);
	const struct ss_pw_port_info *to = ss_pw_view_port(view, link->input_port);
	return from != NULL && to != NULL && is_position(from->channel) && is_position(to->channel)
		&& strcmp(from->channel, to->channel) != 0;
}
