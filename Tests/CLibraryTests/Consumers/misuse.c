/* Misuse of libscenesound must give error codes, never a crash.
 *
 *   misuse SOCKET DAEMON_PID
 *
 * Checks NULL handles and pointers, stale and foreign handles, bad formats and values, closed
 * streams, then stops the daemon (SIGTERM to DAEMON_PID) and checks that every call on the
 * orphaned client and streams returns an error. Prints one line per failed check; exits 0
 * when all pass.
 */
#define _POSIX_C_SOURCE 200809L
#include <scenesound.h>

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int failures;

static void expect(const char *what, int got, int want)
{
    if (got != want) {
        failures++;
        printf("FAIL %s: got %d (%s: %s), want %d (%s)\n", what, got, scenesound_strerror(got),
               scenesound_last_error_message(), want, scenesound_strerror(want));
    }
}

/* A server that shuts down ends its streams first (STREAM_ENDED server_shutdown), then closes:
 * which of the two a call on a stream sees depends on timing. */
static void expect_gone(const char *what, int got)
{
    if (got != SCENESOUND_E_DISCONNECTED && got != SCENESOUND_E_STREAM_FAILED)
        expect(what, got, SCENESOUND_E_DISCONNECTED);
}

static size_t silence(void *user_data, void *buffer, size_t frames)
{
    (void)user_data;
    memset(buffer, 0, frames * 2);
    return frames; /* forever, until closed */
}

static void null_handles(void)
{
    int16_t pcm[2] = {0, 0};
    char *json = (char *)"untouched";
    scenesound_client *foreign = (scenesound_client *)&failures;
    scenesound_stream *stream = (scenesound_stream *)&failures;
    uint32_t rate_hz = 0;

    scenesound_disconnect(NULL); /* ignored */
    expect("connect out NULL", scenesound_connect(NULL, "misuse", NULL), SCENESOUND_E_INVALID_ARGUMENT);
    expect("sample rate NULL", scenesound_server_sample_rate(NULL, &rate_hz), SCENESOUND_E_INVALID_ARGUMENT);
    expect("status NULL", scenesound_status_json(NULL, &json), SCENESOUND_E_INVALID_ARGUMENT);
    expect("status sets out to NULL", json == NULL, 1);
    expect("device spatial NULL", scenesound_set_device_spatial(NULL, SCENESOUND_DEVICE_SPATIAL_FIXED), SCENESOUND_E_INVALID_ARGUMENT);
    expect("device render NULL", scenesound_set_device_render(NULL, SCENESOUND_DEVICE_RENDER_SPEAKERS), SCENESOUND_E_INVALID_ARGUMENT);
    expect("bind NULL", scenesound_scene_bind_window(NULL, "a", 1), SCENESOUND_E_INVALID_ARGUMENT);
    expect("place NULL", scenesound_scene_place(NULL, "a", 0, 0, 1), SCENESOUND_E_INVALID_ARGUMENT);
    expect("alert NULL", scenesound_play_alert_sound(NULL, "bell", NULL, 0, NULL), SCENESOUND_E_INVALID_ARGUMENT);
    expect("head NULL", scenesound_set_head_pose(NULL, 0, 1, 0, 0, 0, NULL), SCENESOUND_E_INVALID_ARGUMENT);
    expect("open NULL", scenesound_stream_open(NULL, 1, 1, 48000, 2, NULL, 1, 0, 0, &stream), SCENESOUND_E_INVALID_ARGUMENT);
    expect("open sets out to NULL", stream == NULL, 1);
    expect("write NULL", scenesound_stream_write(NULL, pcm, sizeof pcm), SCENESOUND_E_INVALID_ARGUMENT);
    expect("drain NULL", scenesound_stream_drain(NULL), SCENESOUND_E_INVALID_ARGUMENT);
    expect("close NULL", scenesound_stream_close(NULL), SCENESOUND_E_INVALID_ARGUMENT);
    /* A pointer the library never returned is not dereferenced: it is just not a handle. */
    expect("foreign client", scenesound_scene_place(foreign, "a", 0, 0, 1), SCENESOUND_E_CLOSED);
    expect("foreign stream", scenesound_stream_drain((scenesound_stream *)&failures), SCENESOUND_E_CLOSED);
    expect("strerror never NULL", scenesound_strerror(12345) != NULL && scenesound_strerror(-12345) != NULL, 1);
}

static void bad_values(scenesound_client *client)
{
    scenesound_stream *stream = NULL;
    uint8_t three_bytes[3] = {0, 0, 0};
    float position[3] = {0, 0, 0};

    expect("format 9", scenesound_stream_open(client, SCENESOUND_KIND_PLAYBACK, 9, 48000, 2, NULL,
                                              SCENESOUND_SPATIAL_ANCHORED, 0, 0, &stream), SCENESOUND_E_BAD_FORMAT);
    expect("rate 7999", scenesound_stream_open(client, SCENESOUND_KIND_PLAYBACK, SCENESOUND_FORMAT_S16LE, 7999, 2,
                                               NULL, SCENESOUND_SPATIAL_ANCHORED, 0, 0, &stream), SCENESOUND_E_BAD_FORMAT);
    expect("9 channels", scenesound_stream_open(client, SCENESOUND_KIND_PLAYBACK, SCENESOUND_FORMAT_S16LE, 48000, 9,
                                                NULL, SCENESOUND_SPATIAL_ANCHORED, 0, 0, &stream), SCENESOUND_E_BAD_FORMAT);
    expect("bad format message", strlen(scenesound_last_error_message()) > 0, 1);
    /* 5.1 (the standard layout for six channels) from a version 2 server on. */
    expect("6 channels", scenesound_stream_open(client, SCENESOUND_KIND_PLAYBACK, SCENESOUND_FORMAT_S16LE, 48000, 6,
                                                NULL, SCENESOUND_SPATIAL_ANCHORED, 0, 0, &stream), 0);
    expect("close 6 channels", scenesound_stream_close(stream), 0);
    expect("kind 0", scenesound_stream_open(client, 0, SCENESOUND_FORMAT_S16LE, 48000, 2, NULL,
                                            SCENESOUND_SPATIAL_ANCHORED, 0, 0, &stream), SCENESOUND_E_INVALID_ARGUMENT);
    expect("system loop", scenesound_stream_open(client, SCENESOUND_KIND_SYSTEM, SCENESOUND_FORMAT_S16LE, 48000, 2, NULL,
                                                 SCENESOUND_SPATIAL_ANCHORED, 0, SCENESOUND_STREAM_LOOP, &stream),
           SCENESOUND_E_INVALID_ARGUMENT);
    expect("volume 99 dB", scenesound_stream_open(client, SCENESOUND_KIND_PLAYBACK, SCENESOUND_FORMAT_S16LE, 48000, 2,
                                                  NULL, SCENESOUND_SPATIAL_ANCHORED, 99, 0, &stream),
           SCENESOUND_E_INVALID_ARGUMENT);
    expect("bad x11 scene", scenesound_scene_place(client, "x11:window", 0, 0, 1), SCENESOUND_E_INVALID_ARGUMENT);
    expect("bind x11 scene", scenesound_scene_bind_window(client, "x11:0x3a00007", 7), SCENESOUND_E_NOT_PERMITTED);
    expect("azimuth 400", scenesound_scene_place(client, "misuse", 400, 0, 1), SCENESOUND_E_INVALID_ARGUMENT);
    expect("not a unit quaternion", scenesound_set_head_pose(client, 0, 2, 0, 0, 0, position), SCENESOUND_E_INVALID_ARGUMENT);
    expect("unknown scene position", scenesound_scene_get_position(client, "never-used", NULL, NULL, NULL),
           SCENESOUND_E_UNKNOWN_SCENE);
    expect("upload partial frame", scenesound_sample_upload(client, "x", SCENESOUND_FORMAT_S16LE, 48000, 1,
                                                            three_bytes, 3), SCENESOUND_E_BAD_FORMAT);
    expect("unknown play flag", scenesound_play_sample_with_flags(client, "bell", SCENESOUND_KIND_ALERT,
                                                                  SCENESOUND_SPATIAL_ANCHORED, 0, NULL, 2, NULL),
           SCENESOUND_E_INVALID_ARGUMENT);
    expect("attention for a system sound", scenesound_play_sample_with_flags(client, "bell", SCENESOUND_KIND_SYSTEM,
                                                                             SCENESOUND_SPATIAL_ANCHORED, 0, NULL,
                                                                             SCENESOUND_PLAY_DEMAND_ATTENTION, NULL),
           SCENESOUND_E_INVALID_ARGUMENT);
    expect("success clears the message", scenesound_scene_place(client, "misuse", 10, 0, 1), SCENESOUND_OK);
    expect("message empty", (int)strlen(scenesound_last_error_message()), 0);

    expect("open", scenesound_stream_open(client, SCENESOUND_KIND_PLAYBACK, SCENESOUND_FORMAT_S16LE, 48000, 2, NULL,
                                          SCENESOUND_SPATIAL_OFF, 0, 0, &stream), SCENESOUND_OK);
    expect("partial frame", scenesound_stream_write(stream, three_bytes, 3), SCENESOUND_E_BAD_FORMAT);
    expect("NULL pcm", scenesound_stream_write(stream, NULL, 4), SCENESOUND_E_INVALID_ARGUMENT);
    expect("empty write", scenesound_stream_write(stream, NULL, 0), SCENESOUND_OK);
    expect("close", scenesound_stream_close(stream), SCENESOUND_OK);
    expect("write after close", scenesound_stream_write(stream, three_bytes, 0), SCENESOUND_E_CLOSED);
    expect("drain after close", scenesound_stream_drain(stream), SCENESOUND_E_CLOSED);
    expect("volume after close", scenesound_stream_set_volume(stream, -3), SCENESOUND_E_CLOSED);
    expect("close twice", scenesound_stream_close(stream), SCENESOUND_E_CLOSED);
}

static void stop_daemon_and_wait(scenesound_client *client, pid_t daemon)
{
    struct timespec pause = {0, 20 * 1000 * 1000};
    int i;
    kill(daemon, SIGTERM);
    for (i = 0; i < 500; i++) { /* up to 10 s */
        if (scenesound_scene_place(client, "misuse", 0, 0, 1) == SCENESOUND_E_DISCONNECTED) return;
        nanosleep(&pause, NULL);
    }
    expect("disconnected after the daemon stopped", 0, 1);
}

int main(int argc, char **argv)
{
    scenesound_client *client = NULL, *stale = NULL;
    scenesound_stream *stream = NULL, *pull = NULL;
    int16_t pcm[960];
    int status;

    if (argc != 3) {
        fprintf(stderr, "usage: misuse SOCKET DAEMON_PID\n");
        return 2;
    }
    memset(pcm, 0, sizeof pcm);
    null_handles();
    expect("no server", scenesound_connect("/nonexistent/socket", "misuse", &client), SCENESOUND_E_CANNOT_CONNECT);
    expect("connect", scenesound_connect(argv[1], "misuse", &client), SCENESOUND_OK);
    bad_values(client);

    expect("connect a second client", scenesound_connect(argv[1], "misuse-stale", &stale), SCENESOUND_OK);
    scenesound_disconnect(stale);
    expect("disconnected handle", scenesound_scene_place(stale, "misuse", 0, 0, 1), SCENESOUND_E_CLOSED);
    scenesound_disconnect(stale); /* twice: ignored */

    expect("open pull", scenesound_stream_open_callback(client, SCENESOUND_KIND_PLAYBACK, SCENESOUND_FORMAT_S16LE, 48000,
                                                        1, NULL, SCENESOUND_SPATIAL_OFF, -60, 0, silence, NULL, &pull),
           SCENESOUND_OK);
    expect("write to pull stream", scenesound_stream_write(pull, pcm, sizeof pcm), SCENESOUND_E_NOT_PULL_STREAM);
    expect("NULL callback", scenesound_stream_open_callback(client, SCENESOUND_KIND_PLAYBACK, SCENESOUND_FORMAT_S16LE,
                                                            48000, 1, NULL, SCENESOUND_SPATIAL_OFF, 0, 0, NULL, NULL,
                                                            &stream), SCENESOUND_E_INVALID_ARGUMENT);
    expect("open push", scenesound_stream_open(client, SCENESOUND_KIND_PLAYBACK, SCENESOUND_FORMAT_S16LE, 48000, 2, NULL,
                                               SCENESOUND_SPATIAL_OFF, -60, 0, &stream), SCENESOUND_OK);
    expect("write", scenesound_stream_write(stream, pcm, sizeof pcm), SCENESOUND_OK);

    stop_daemon_and_wait(client, (pid_t)atoi(argv[2]));
    expect_gone("write, server gone", scenesound_stream_write(stream, pcm, sizeof pcm));
    expect_gone("drain, server gone", scenesound_stream_drain(stream));
    expect_gone("pull drain, server gone", scenesound_stream_drain(pull));
    expect("status, server gone", scenesound_status_json(client, NULL), SCENESOUND_E_INVALID_ARGUMENT);
    expect("head pose, server gone", scenesound_set_head_pose(client, 0, 1, 0, 0, 0, NULL), SCENESOUND_E_DISCONNECTED);
    expect("close, server gone", scenesound_stream_close(stream), SCENESOUND_OK);
    /* The daemon may still be closing its socket: refused, or accepted and then dropped. */
    status = scenesound_connect(argv[1], "misuse", &stale);
    if (status != SCENESOUND_E_DISCONNECTED) expect("reconnect, server gone", status, SCENESOUND_E_CANNOT_CONNECT);
    expect("failed connect leaves NULL", stale == NULL, 1);
    scenesound_disconnect(client); /* also stops and joins the pull stream's render thread */
    expect("pull stream after disconnect", scenesound_stream_close(pull), SCENESOUND_E_CLOSED);

    printf("%s: %d failed checks\n", failures ? "FAILED" : "ok", failures);
    return failures ? 1 : 0;
}
