// The daemon's own short Wayland connection, for what the compositors' IPCs do not say: each
// output's physical size (wl_output's geometry event). libwayland's listeners are structs of C
// function pointers and its requests are variadic underneath: written in C.
#include "wayland_outputs.h"

#include <errno.h>
#include <poll.h>
#include <string.h>
#include <time.h>
#include <wayland-client.h>

// A compositor that stops answering must not hold the window source's thread (and the
// daemon's exit, which joins it): each round trip waits this long at most.
enum { roundtrip_timeout_ms = 2000 };

struct reading {
    scenesound_wl_output *outputs;
    struct wl_output *proxies[16];
    int capacity;
    int count;
};

static scenesound_wl_output *slot(void *data, struct wl_output *proxy) {
    struct reading *reading = data;
    for (int i = 0; i < reading->count; i++) {
        if (reading->proxies[i] == proxy) return &reading->outputs[i];
    }
    return NULL;
}

static void on_geometry(void *data, struct wl_output *proxy, int32_t x, int32_t y, int32_t width_mm, int32_t height_mm,
                        int32_t subpixel, const char *make, const char *model, int32_t transform) {
    (void)subpixel; (void)make; (void)model; (void)transform;
    scenesound_wl_output *output = slot(data, proxy);
    if (!output) return;
    output->x = x;
    output->y = y;
    output->width_mm = width_mm;
    output->height_mm = height_mm;
}

static void on_mode(void *data, struct wl_output *proxy, uint32_t flags, int32_t width, int32_t height, int32_t refresh) {
    (void)refresh;
    scenesound_wl_output *output = slot(data, proxy);
    if (!output || !(flags & WL_OUTPUT_MODE_CURRENT)) return;
    output->mode_width = width;
    output->mode_height = height;
}

static void on_done(void *data, struct wl_output *proxy) { (void)data; (void)proxy; }

static void on_scale(void *data, struct wl_output *proxy, int32_t factor) {
    scenesound_wl_output *output = slot(data, proxy);
    if (output) output->scale = factor;
}

static void on_name(void *data, struct wl_output *proxy, const char *name) {
    scenesound_wl_output *output = slot(data, proxy);
    if (output && name) {
        strncpy(output->name, name, sizeof output->name - 1);
        output->name[sizeof output->name - 1] = 0;
    }
}

static void on_description(void *data, struct wl_output *proxy, const char *description) {
    (void)data; (void)proxy; (void)description;
}

static const struct wl_output_listener output_listener = {
    .geometry = on_geometry, .mode = on_mode, .done = on_done, .scale = on_scale,
    .name = on_name, .description = on_description,
};

static void on_global(void *data, struct wl_registry *registry, uint32_t name, const char *interface, uint32_t version) {
    struct reading *reading = data;
    if (strcmp(interface, wl_output_interface.name) != 0) return;
    if (reading->count >= reading->capacity || reading->count >= 16) return;
    struct wl_output *proxy = wl_registry_bind(registry, name, &wl_output_interface, version < 4 ? version : 4);
    if (!proxy) return;
    memset(&reading->outputs[reading->count], 0, sizeof reading->outputs[0]);
    reading->outputs[reading->count].scale = 1;
    reading->proxies[reading->count++] = proxy;
    wl_output_add_listener(proxy, &output_listener, reading);
}

static void on_global_remove(void *data, struct wl_registry *registry, uint32_t name) {
    (void)data; (void)registry; (void)name;
}

static const struct wl_registry_listener registry_listener = { .global = on_global, .global_remove = on_global_remove };

static void on_sync_done(void *data, struct wl_callback *callback, uint32_t serial) {
    (void)serial;
    *(int *)data = 1;
    wl_callback_destroy(callback);
}

static const struct wl_callback_listener sync_listener = { .done = on_sync_done };

static long now_ms(void) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return now.tv_sec * 1000L + now.tv_nsec / 1000000L;
}

// wl_display_roundtrip with a deadline: 0 once the compositor has answered, -1 on an error or
// when it did not answer in time.
static int roundtrip(struct wl_display *connection) {
    int done = 0;
    struct wl_callback *callback = wl_display_sync(connection);
    if (!callback) return -1;
    wl_callback_add_listener(callback, &sync_listener, &done);
    long deadline = now_ms() + roundtrip_timeout_ms;
    int failed = 0;
    while (!done && !failed) {
        if (wl_display_prepare_read(connection) != 0) {
            failed = wl_display_dispatch_pending(connection) < 0;
            continue;
        }
        long remaining = deadline - now_ms();
        struct pollfd descriptor = { .fd = wl_display_get_fd(connection), .events = POLLIN };
        int ready = wl_display_flush(connection) < 0 ? -1 : remaining > 0 ? poll(&descriptor, 1, (int)remaining) : 0;
        if (ready <= 0) {
            wl_display_cancel_read(connection);
            failed = !(ready < 0 && errno == EINTR);
            continue;
        }
        failed = wl_display_read_events(connection) < 0 || wl_display_dispatch_pending(connection) < 0;
    }
    if (!done) wl_callback_destroy(callback);
    return done ? 0 : -1;
}

int scenesound_read_wayland_outputs(const char *display, scenesound_wl_output *outputs, int capacity) {
    struct wl_display *connection = wl_display_connect(display);
    if (!connection) return -1;
    struct reading reading = { .outputs = outputs, .capacity = capacity, .count = 0 };
    struct wl_registry *registry = wl_display_get_registry(connection);
    wl_registry_add_listener(registry, &registry_listener, &reading);
    // The globals, then the outputs' events (sent on bind, each ending with its "done").
    int ok = roundtrip(connection) == 0 && roundtrip(connection) == 0;
    for (int i = 0; i < reading.count; i++) {
        if (wl_output_get_version(reading.proxies[i]) >= WL_OUTPUT_RELEASE_SINCE_VERSION) {
            wl_output_release(reading.proxies[i]);
        } else {
            wl_output_destroy(reading.proxies[i]);
        }
    }
    wl_registry_destroy(registry);
    wl_display_disconnect(connection);
    return ok ? reading.count : -1;
}
