/* A 5.1 stream in another order than WAVE's, through scenesound_stream_open_with_channel_map.
 *
 *   surround-map CHANNEL...
 *
 * Opens a 6-channel stream whose channels are FL FR SL SR FC LFE (a 5.1 file's order in some
 * players; WAVE's is FL FR FC LFE BL BR) and, for each CHANNEL index (0-5) given, plays one
 * second of noise in that channel alone, then half a second of silence. Also checks that an
 * unknown or repeated speaker is refused. Exits 0 when everything succeeded.
 */
#include <scenesound.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define RATE 48000
#define CHANNELS 6

static float frames[RATE * CHANNELS];

static int check(const char *what, int result, int want)
{
    if (result != want) {
        fprintf(stderr, "%s: got %d (%s: %s), want %d\n", what, result, scenesound_strerror(result),
                scenesound_last_error_message(), want);
        return 1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    scenesound_client *client = NULL;
    if (check("connect", scenesound_connect(NULL, "surround-map", &client), 0))
        return 1;
    const int map[CHANNELS] = {SCENESOUND_CHANNEL_FL, SCENESOUND_CHANNEL_FR, SCENESOUND_CHANNEL_SL,
                               SCENESOUND_CHANNEL_SR, SCENESOUND_CHANNEL_FC, SCENESOUND_CHANNEL_LFE};
    const int unknown[CHANNELS] = {0, 1, 2, 3, 4, 9}, repeated[CHANNELS] = {0, 1, 2, 3, 4, 4};
    scenesound_stream *stream = NULL;
    int failed = 0;
    failed |= check("unknown speaker", scenesound_stream_open_with_channel_map(client, SCENESOUND_KIND_PLAYBACK,
                    SCENESOUND_FORMAT_F32LE, RATE, CHANNELS, unknown, NULL, SCENESOUND_SPATIAL_ANCHORED, 0, 0, &stream),
                    SCENESOUND_E_BAD_FORMAT);
    failed |= check("repeated speaker", scenesound_stream_open_with_channel_map(client, SCENESOUND_KIND_PLAYBACK,
                    SCENESOUND_FORMAT_F32LE, RATE, CHANNELS, repeated, NULL, SCENESOUND_SPATIAL_ANCHORED, 0, 0, &stream),
                    SCENESOUND_E_BAD_FORMAT);
    if (failed || check("open", scenesound_stream_open_with_channel_map(client, SCENESOUND_KIND_PLAYBACK,
                        SCENESOUND_FORMAT_F32LE, RATE, CHANNELS, map, NULL, SCENESOUND_SPATIAL_ANCHORED, 0, 0, &stream), 0))
        return 1;
    uint32_t state = 12345;
    for (int argument = 1; argument < argc; argument++) {
        int channel = atoi(argv[argument]);
        if (channel < 0 || channel >= CHANNELS)
            return 2;
        for (int frame = 0; frame < RATE; frame++) {
            for (int c = 0; c < CHANNELS; c++)
                frames[frame * CHANNELS + c] = 0;
            state = state * 1664525u + 1013904223u;
            frames[frame * CHANNELS + channel] = 0.3f * ((float)(state >> 8) / 8388608.0f - 1.0f);
        }
        if (check("write noise", scenesound_stream_write(stream, frames, sizeof(frames)), 0))
            return 1;
        for (int i = 0; i < RATE * CHANNELS; i++)
            frames[i] = 0;
        if (check("write silence", scenesound_stream_write(stream, frames, sizeof(frames) / 2), 0))
            return 1;
    }
    if (check("drain", scenesound_stream_drain(stream), 0) || check("close", scenesound_stream_close(stream), 0))
        return 1;
    scenesound_disconnect(client);
    puts("played");
    return 0;
}
