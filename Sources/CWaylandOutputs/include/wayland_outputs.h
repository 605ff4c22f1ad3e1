#ifndef SCENESOUND_WAYLAND_OUTPUTS_H
#define SCENESOUND_WAYLAND_OUTPUTS_H

#include <stdint.h>

/// One wl_output as the compositor announces it: position in its global space, physical size
/// (millimetres; headless and virtual outputs say 0 or -1: unknown), current mode, scale, and
/// name (wl_output version 4; empty before).
typedef struct {
    int32_t x, y;
    int32_t width_mm, height_mm;
    int32_t mode_width, mode_height;
    int32_t scale;
    char name[64];
} scenesound_wl_output;

/// Connects to the Wayland display `display` (a name in $XDG_RUNTIME_DIR, or an absolute socket
/// path; NULL: $WAYLAND_DISPLAY), reads every output's announcement, disconnects. Returns how
/// many were read (at most `capacity`), or -1 when there is no display to connect to.
int scenesound_read_wayland_outputs(const char *display, scenesound_wl_output *outputs, int capacity);

#endif
