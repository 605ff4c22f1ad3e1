/* alert-on-window: plays an alert sound at an X11 window through libscenesound.
 *
 *   alert-on-window [--flash] WINDOW [SOUND_NAME]
 *
 * WINDOW is an X11 window id (e.g. 0x3a00007, from `xdotool getactivewindow` or xwininfo); the
 * sound plays in the scene "x11:0x…", which the server keeps at that window. SOUND_NAME is
 * played from the server's sample cache (`scenesound alert NAME` puts sound-theme sounds there).
 * Without one, or when the cache does not have it, this program plays its own chime, cached as
 * "alert-on-window-chime": synthesized and uploaded the first time — the library decodes no
 * files, see "Sounds by name and file" in scenesound.h. (It never uploads under SOUND_NAME:
 * that would replace the theme's sound for every client.) --flash also asks the window manager
 * to draw attention to the window (SCENESOUND_PLAY_DEMAND_ATTENTION).
 *
 * Build: cc -std=c99 alert-on-window.c $(pkg-config --cflags --libs scenesound) -lm
 */
#include <scenesound.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHIME_NAME "alert-on-window-chime"
#define CHIME_RATE_HZ 48000
#define CHIME_FRAMES (CHIME_RATE_HZ * 35 / 100) /* 0.35 s */

/* Two partials a fifth apart with an exponential decay: unmistakably an alert, no clicks. */
static void synthesize_chime(int16_t *pcm, size_t frames)
{
    const double pi = 3.14159265358979323846;
    size_t i;
    for (i = 0; i < frames; i++) {
        double t = (double)i / CHIME_RATE_HZ;
        double attack = t < 0.005 ? t / 0.005 : 1.0;
        double envelope = attack * exp(-t * 9.0);
        double value = 0.5 * sin(2 * pi * 880.0 * t) + 0.3 * sin(2 * pi * 1320.0 * t);
        pcm[i] = (int16_t)lrint(value * envelope * 32767.0 * 0.8);
    }
}

static int16_t chime[CHIME_FRAMES];

static int play(scenesound_client *client, const char *name, const char *scene, unsigned int flags,
                uint32_t *play_id)
{
    return scenesound_play_sample_with_flags(client, name, SCENESOUND_KIND_ALERT, SCENESOUND_SPATIAL_ANCHORED, 0.0f,
                                             scene, flags, play_id);
}

static int fail(const char *what, int status)
{
    fprintf(stderr, "alert-on-window: %s: %s (%s)\n", what, scenesound_strerror(status),
            scenesound_last_error_message());
    return 1;
}

int main(int argc, char **argv)
{
    unsigned int flags = argc > 1 && strcmp(argv[1], "--flash") == 0 ? SCENESOUND_PLAY_DEMAND_ATTENTION : 0;
    const char *name;
    scenesound_client *client = NULL;
    unsigned long window;
    char *end = NULL;
    char scene[32];
    uint32_t play_id = 0;
    int reason = 0;
    int status;

    if (flags) {
        argc--;
        argv++;
    }
    if (argc < 2 || argc > 3) {
        fprintf(stderr, "usage: alert-on-window [--flash] WINDOW [SOUND_NAME]\n");
        return 2;
    }
    name = argc > 2 ? argv[2] : CHIME_NAME;
    window = strtoul(argv[1], &end, 0);
    if (*argv[1] == '\0' || *end != '\0' || window == 0 || window > 0xffffffffUL) {
        fprintf(stderr, "alert-on-window: '%s' is not an X11 window id (e.g. 0x3a00007)\n", argv[1]);
        return 2;
    }
    snprintf(scene, sizeof scene, "x11:0x%lx", window);

    status = scenesound_connect(NULL, "alert-on-window", &client);
    if (status != SCENESOUND_OK) return fail("connect", status);

    status = play(client, name, scene, flags, &play_id);
    if (status == SCENESOUND_E_UNKNOWN_SOUND && strcmp(name, CHIME_NAME) != 0) {
        fprintf(stderr, "alert-on-window: \"%s\" is not in the server's cache; playing the chime\n", name);
        name = CHIME_NAME;
        status = play(client, name, scene, flags, &play_id);
    }
    if (status == SCENESOUND_E_UNKNOWN_SOUND) {
        synthesize_chime(chime, CHIME_FRAMES);
        status = scenesound_sample_upload(client, name, SCENESOUND_FORMAT_S16LE, CHIME_RATE_HZ, 1,
                                          chime, sizeof chime);
        if (status == SCENESOUND_OK) status = play(client, name, scene, flags, &play_id);
    }
    if (status != SCENESOUND_OK) {
        scenesound_disconnect(client);
        return fail("play", status);
    }

    /* Disconnecting cuts a play short, so stay until it has been heard. */
    status = scenesound_playback_wait(client, play_id, 10000, &reason);
    scenesound_disconnect(client);
    if (status != SCENESOUND_OK) return fail("waiting for the alert", status);
    printf("played \"%s\" at %s (%s)\n", name, scene,
           reason == SCENESOUND_PLAYBACK_COMPLETED ? "completed"
           : reason == SCENESOUND_PLAYBACK_COALESCED ? "coalesced" : "interrupted");
    return 0;
}
