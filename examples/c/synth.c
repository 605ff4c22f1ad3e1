/* synth: a sine tone through libscenesound's callback (pull-mode) API whose pitch follows
 * where its scene is.
 *
 *   synth SCENE [SECONDS]
 *
 * The library renders on its own thread and calls render() whenever the server has room.
 * The main thread asks the server every 50 ms where SCENE is (scenesound_scene_get_position)
 * and maps its azimuth to pitch: 440 Hz straight ahead, an octave up at 90° left, an octave
 * down at 90° right. With SCENE = "x11:0x…" the pitch follows that window as the server tracks
 * it (the C library has no X11 connection of its own: the server's tracker is the source);
 * with a named scene it follows `scenesound scene place NAME …`. Until the server lists the
 * scene the tone stays at 440 Hz. SECONDS defaults to 3.
 *
 * Build: cc -std=c99 synth.c $(pkg-config --cflags --libs scenesound) -lm -lpthread
 */
#define _POSIX_C_SOURCE 200809L
#include <scenesound.h>

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

struct synth {
    pthread_mutex_t lock; /* guards frequency_hz and finished between the two threads */
    double frequency_hz;
    int finished;
    /* Owned by the render thread only. */
    double phase;            /* in cycles, 0 … 1: continuous across pitch changes */
    double rate_hz;
    size_t frames_left;
};

static size_t render(void *user_data, void *buffer, size_t frames)
{
    struct synth *synth = user_data;
    float *out = buffer;
    size_t count = frames < synth->frames_left ? frames : synth->frames_left;
    double frequency_hz;
    size_t i;

    pthread_mutex_lock(&synth->lock);
    frequency_hz = synth->frequency_hz;
    pthread_mutex_unlock(&synth->lock);

    for (i = 0; i < count; i++) {
        out[i] = (float)(0.4 * sin(2.0 * 3.14159265358979323846 * synth->phase));
        synth->phase += frequency_hz / synth->rate_hz;
        synth->phase -= floor(synth->phase);
    }
    synth->frames_left -= count;
    if (count < frames) { /* returning short ends the stream */
        pthread_mutex_lock(&synth->lock);
        synth->finished = 1;
        pthread_mutex_unlock(&synth->lock);
    }
    return count;
}

static double pitch_for_azimuth(float azimuth_degrees)
{
    double clamped = azimuth_degrees > 90 ? 90 : azimuth_degrees < -90 ? -90 : azimuth_degrees;
    return 440.0 * pow(2.0, clamped / 90.0);
}

static int fail(const char *what, int status)
{
    fprintf(stderr, "synth: %s: %s (%s)\n", what, scenesound_strerror(status), scenesound_last_error_message());
    return 1;
}

int main(int argc, char **argv)
{
    struct synth synth;
    scenesound_client *client = NULL;
    scenesound_stream *stream = NULL;
    const char *scene;
    double seconds = 3;
    uint32_t rate_hz = 48000;
    double shown_hz = 0;
    int finished = 0;
    int status;

    if (argc < 2 || argc > 3) {
        fprintf(stderr, "usage: synth SCENE [SECONDS]\n");
        return 2;
    }
    scene = argv[1];
    if (argc == 3) seconds = atof(argv[2]);
    if (!(seconds > 0 && seconds <= 3600)) {
        fprintf(stderr, "synth: SECONDS must be between 0 and 3600\n");
        return 2;
    }

    status = scenesound_connect(NULL, "synth", &client);
    if (status != SCENESOUND_OK) return fail("connect", status);
    scenesound_server_sample_rate(client, &rate_hz); /* synthesize at the output rate: no resampling */

    pthread_mutex_init(&synth.lock, NULL);
    synth.frequency_hz = 440.0;
    synth.finished = 0;
    synth.phase = 0;
    synth.rate_hz = rate_hz;
    synth.frames_left = (size_t)(seconds * rate_hz);

    status = scenesound_stream_open_callback(client, SCENESOUND_KIND_PLAYBACK, SCENESOUND_FORMAT_F32LE, rate_hz, 1,
                                             scene, SCENESOUND_SPATIAL_ANCHORED, -6.0f, 0, render, &synth, &stream);
    if (status != SCENESOUND_OK) {
        scenesound_disconnect(client);
        return fail("open", status);
    }

    while (!finished) {
        struct timespec pause = {0, 50 * 1000 * 1000};
        float azimuth_degrees;
        if (scenesound_scene_get_position(client, scene, &azimuth_degrees, NULL, NULL) == SCENESOUND_OK) {
            double frequency_hz = pitch_for_azimuth(azimuth_degrees);
            pthread_mutex_lock(&synth.lock);
            synth.frequency_hz = frequency_hz;
            pthread_mutex_unlock(&synth.lock);
            if (fabs(frequency_hz - shown_hz) > 0.5) {
                printf("synth: %s at azimuth %.1f degrees: %.1f Hz\n", scene, azimuth_degrees, frequency_hz);
                fflush(stdout);
                shown_hz = frequency_hz;
            }
        }
        nanosleep(&pause, NULL);
        pthread_mutex_lock(&synth.lock);
        finished = synth.finished;
        pthread_mutex_unlock(&synth.lock);
    }

    /* The callback has ended the stream; wait until its last period has been played. */
    status = scenesound_stream_drain(stream);
    scenesound_stream_close(stream);
    scenesound_disconnect(client);
    pthread_mutex_destroy(&synth.lock);
    if (status != SCENESOUND_OK) return fail("drain", status);
    return 0;
}
