#ifndef SCENESOUND_PIPEWIRE_REGISTRY_H
#define SCENESOUND_PIPEWIRE_REGISTRY_H

#include <stdint.h>

/* One view of PipeWire's registry — nodes, ports and links as the registry announced them — kept
 * by SceneSound's connection that watches the graph: the graph node (the output and the capture
 * on it). Fed from a registry
 * listener's global and global_remove events and read on the thread that dispatches them; no
 * locking of its own. */

#define SS_PW_TEXT 128

struct spa_dict;

struct ss_pw_node_info {
	uint32_t id;
	uint64_t serial;            /* object.serial: never reused, unlike ids */
	int32_t process_id;         /* application.process.id (a stream node's comes with its info,
	                               which its owner binds for: 0 until then, or if none) */
	char media_class[64];
	char name[SS_PW_TEXT];
};
struct ss_pw_port_info {
	uint32_t id, node;
	int32_t is_output;
	char channel[16];           /* audio.channel */
	char name[64];              /* port.name */
};
struct ss_pw_link_info {
	uint32_t id, output_node, output_port, input_node, input_port;
};

struct ss_pw_view_port {
	struct ss_pw_port_info info;
	uint32_t linked_mask;       /* the graph node's: channels of a set it linked this port to */
};

struct ss_pw_view {
	struct ss_pw_node_info *nodes;
	uint32_t node_count, node_capacity;
	struct ss_pw_view_port *ports;
	uint32_t port_count, port_capacity;
	struct ss_pw_link_info *links;
	uint32_t link_count, link_capacity;
};

enum ss_pw_view_kind { SS_PW_VIEW_NONE = 0, SS_PW_VIEW_NODE = 1, SS_PW_VIEW_PORT = 2, SS_PW_VIEW_LINK = 3 };

/* What a registry global announced (type: PW_TYPE_INTERFACE_*), added; its kind, or NONE (not a
 * node, port or link, or out of memory). */
int ss_pw_view_add(struct ss_pw_view *view, uint32_t id, const char *type, const struct spa_dict *props);
/* The object of that id removed; its kind, or NONE. */
int ss_pw_view_remove(struct ss_pw_view *view, uint32_t id);
/* Frees the arrays; the view is empty after. */
void ss_pw_view_clear(struct ss_pw_view *view);

/* Lookups; NULL when the registry has not told of it (or it is gone). */
struct ss_pw_node_info *ss_pw_view_node(const struct ss_pw_view *view, uint32_t id);
struct ss_pw_node_info *ss_pw_view_node_named(const struct ss_pw_view *view, const char *name);
struct ss_pw_node_info *ss_pw_view_node_with_serial(const struct ss_pw_view *view, uint64_t serial);
struct ss_pw_port_info *ss_pw_view_port(const struct ss_pw_view *view, uint32_t id);

/* Whether a link joins two different channel positions (FL to FR): an app's ports can be
 * announced again with the same ids and other channels while the session manager sets them up,
 * and a link made before then is crossed. MONO, AUX and unknown channels cross nothing. */
int ss_pw_view_link_is_crossed(const struct ss_pw_view *view, const struct ss_pw_link_info *link);

#endif
