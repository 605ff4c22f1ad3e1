/* Disconnects another process's clients from the PipeWire server: what the capture's guard does to
 * a daemon that hangs. A node that never finishes its cycle holds every node of its driver's group
 * silent (the user's sink among them) for as long as it stays in the graph; destroying its client
 * takes out its nodes, ports and links at once, as the process's death would. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <pipewire/pipewire.h>
#include <spa/utils/string.h>

#include "pipewire_graph.h"

#define SS_MAX_CLIENTS 16

struct disconnect {
	struct pw_main_loop *loop;
	struct pw_core *core;
	struct pw_registry *registry;
	char pid[16];
	uint32_t clients[SS_MAX_CLIENTS];
	uint32_t client_count;
	int listed_seq, destroyed_seq;
	int result;
};

static void on_global(void *data, uint32_t id, uint32_t permissions, const char *type, uint32_t version,
		const struct spa_dict *props)
{
	struct disconnect *d = data;
	(void)permissions; (void)version;
	if (!spa_streq(type, PW_TYPE_INTERFACE_Client) || props == NULL || d->client_count == SS_MAX_CLIENTS)
		return;
	if (spa_streq(spa_dict_lookup(props, PW_KEY_SEC_PID), d->pid))
		d->clients[d->client_count++] = id;
}

static const struct pw_registry_events registry_events = { PW_VERSION_REGISTRY_EVENTS, .global = on_global };

static void on_done(void *data, uint32_t id, int seq)
{
	struct disconnect *d = data;
	if (id != PW_ID_CORE)
		return;
	if (seq == d->listed_seq) {
		/* Every global announced: destroy the process's clients, then wait for the server to
		 * have done it (its answer to a sync comes after). */
		for (uint32_t i = 0; i < d->client_count; i++)
			pw_registry_destroy(d->registry, d->clients[i]);
		d->destroyed_seq = pw_core_sync(d->core, PW_ID_CORE, 0);
	} else if (seq == d->destroyed_seq) {
		d->result = (int)d->client_count;
		pw_main_loop_quit(d->loop);
	}
}

static void on_error(void *data, uint32_t id, int seq, int res, const char *message)
{
	struct disconnect *d = data;
	(void)seq; (void)message;
	/* A client gone meanwhile (ENOENT) is as good as destroyed; the core's own error ends it. */
	if (id == PW_ID_CORE) {
		d->result = res < 0 ? res : -EIO;
		pw_main_loop_quit(d->loop);
	}
}

static const struct pw_core_events core_events = { PW_VERSION_CORE_EVENTS, .done = on_done, .error = on_error };

static void on_timeout(void *data, uint64_t expirations)
{
	struct disconnect *d = data;
	(void)expirations;
	d->result = -ETIMEDOUT;
	pw_main_loop_quit(d->loop);
}

int ss_pw_disconnect_process(const char *remote, int32_t pid, int timeout_ms)
{
	/* Our own process's clients would include the connection doing it. */
	if (pid <= 0 || pid == getpid() || timeout_ms <= 0)
		return -EINVAL;
	pw_init(NULL, NULL);
	struct disconnect d = { .result = -EIO, .listed_seq = -1, .destroyed_seq = -1 };
	snprintf(d.pid, sizeof(d.pid), "%d", (int)pid);
	struct pw_context *context = NULL;
	struct spa_hook core_listener, registry_listener;
	spa_zero(core_listener);
	spa_zero(registry_listener);
	d.loop = pw_main_loop_new(NULL);
	if (d.loop == NULL)
		return -errno;
	struct pw_loop *loop = pw_main_loop_get_loop(d.loop);
	struct spa_source *timer = pw_loop_add_timer(loop, on_timeout, &d);
	context = pw_context_new(loop, NULL, 0);
	if (context == NULL || timer == NULL) {
		d.result = -ENOMEM;
		goto done;
	}
	struct timespec timeout = { timeout_ms / 1000, (long)(timeout_ms % 1000) * 1000000L };
	pw_loop_update_timer(loop, timer, &timeout, NULL, false);
	struct pw_properties *props = pw_properties_new(PW_KEY_APP_NAME, "SceneSound capture guard", NULL);
	if (remote != NULL)
		pw_properties_set(props, PW_KEY_REMOTE_NAME, remote);
	d.core = pw_context_connect(context, props, 0);
	if (d.core == NULL) {
		d.result = -errno;
		goto done;
	}
	pw_core_add_listener(d.core, &core_listener, &core_events, &d);
	d.registry = pw_core_get_registry(d.core, PW_VERSION_REGISTRY, 0);
	pw_registry_add_listener(d.registry, &registry_listener, &registry_events, &d);
	d.listed_seq = pw_core_sync(d.core, PW_ID_CORE, 0);
	pw_main_loop_run(d.loop);
	spa_hook_remove(&registry_listener);
	spa_hook_remove(&core_listener);
	pw_proxy_destroy((struct pw_proxy *)d.registry);
	pw_core_disconnect(d.core);
done:
	if (context != NULL)
		pw_context_destroy(context);
	if (timer != NULL)
		pw_loop_destroy_source(loop, timer);
	pw_main_loop_destroy(d.loop);
	return d.result;
}
