/*
 * The reference peer for `scenesound bench` (docs/ARCHITECTURE.md "Quality and performance bars"):
 * the same scene — N mono noise sources evenly spaced on a 2 m ring, the listener turning
 * at 90°/s — rendered by OpenAL Soft with HRTF through its loopback device, as fast as it
 * goes, in blocks of 256 frames at 48 kHz. Prints one JSON line.
 *
 * cpu_seconds_per_audio_second is this thread's CPU time (CLOCK_THREAD_CPUTIME_ID) inside
 * alcRenderSamplesSOFT, over the audio rendered: a loopback device mixes on the caller's
 * thread. process_cpu_seconds_per_audio_second (getrusage over the same span) would show any
 * work OpenAL pushed to threads of its own.
 *
 * Usage: openal_bench SOURCES SECONDS
 */
#include <AL/al.h>
#include <AL/alc.h>
#include <AL/alext.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <time.h>

enum { RATE_HZ = 48000, BLOCK_FRAMES = 256 };
static const double RING_RADIUS_METRES = 2.0;
static const double YAW_DEGREES_PER_SECOND = 90.0;
static const double WARMUP_SECONDS = 0.25;

static double clock_seconds(clockid_t clock) {
    struct timespec ts;
    clock_gettime(clock, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static double process_cpu_seconds(void) {
    struct rusage usage;
    getrusage(RUSAGE_SELF, &usage);
    return (double)(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec)
         + (double)(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) * 1e-6;
}

static void fail(const char *message) {
    fprintf(stderr, "openal_bench: %s\n", message);
    exit(1);
}

/* The listener turned by yaw degrees counter-clockwise seen from above (+ = left), as in
 * SceneSound: OpenAL looks down -z with +y up, so forward = (-sin, 0, -cos). */
static void set_listener_yaw(double degrees) {
    double radians = degrees * M_PI / 180.0;
    ALfloat orientation[6] = {(ALfloat)-sin(radians), 0, (ALfloat)-cos(radians), 0, 1, 0};
    alListenerfv(AL_ORIENTATION, orientation);
}

int main(int argc, char **argv) {
    if (argc != 3) fail("usage: openal_bench SOURCES SECONDS");
    int sources = atoi(argv[1]);
    double seconds = atof(argv[2]);
    if (sources < 1 || seconds <= 0) fail("SOURCES must be at least 1 and SECONDS more than 0");

    LPALCLOOPBACKOPENDEVICESOFT loopback_open =
        (LPALCLOOPBACKOPENDEVICESOFT)alcGetProcAddress(NULL, "alcLoopbackOpenDeviceSOFT");
    LPALCRENDERSAMPLESSOFT render_samples =
        (LPALCRENDERSAMPLESSOFT)alcGetProcAddress(NULL, "alcRenderSamplesSOFT");
    if (!alcIsExtensionPresent(NULL, "ALC_SOFT_loopback") || !loopback_open || !render_samples)
        fail("this OpenAL has no ALC_SOFT_loopback");
    ALCdevice *device = loopback_open(NULL);
    if (!device) fail("cannot open a loopback device");
    if (!alcIsExtensionPresent(device, "ALC_SOFT_HRTF")) fail("this OpenAL has no ALC_SOFT_HRTF");

    /* OpenAL Soft allows 256 mono sources per context unless asked for more. */
    ALCint attributes[] = {
        ALC_FORMAT_CHANNELS_SOFT, ALC_STEREO_SOFT, ALC_FORMAT_TYPE_SOFT, ALC_FLOAT_SOFT,
        ALC_FREQUENCY, RATE_HZ, ALC_HRTF_SOFT, ALC_TRUE,
        ALC_MONO_SOURCES, sources, ALC_STEREO_SOURCES, 0, 0,
    };
    ALCcontext *context = alcCreateContext(device, attributes);
    if (!context || !alcMakeContextCurrent(context)) fail("cannot create the context");
    ALCint hrtf_status = 0;
    alcGetIntegerv(device, ALC_HRTF_STATUS_SOFT, 1, &hrtf_status);
    if (hrtf_status != ALC_HRTF_ENABLED_SOFT) fail("HRTF is not enabled on the loopback device");
    const ALCchar *hrtf_name = alcGetString(device, ALC_HRTF_SPECIFIER_SOFT);

    /* One second of 16-bit white noise (xorshift32, the seed scenesound bench uses);
     * each source starts it at its own offset so the sources are uncorrelated. */
    static int16_t noise[RATE_HZ];
    uint32_t state = 0x9E3779B9u;
    for (int i = 0; i < RATE_HZ; i++) {
        state ^= state << 13; state ^= state >> 17; state ^= state << 5;
        noise[i] = (int16_t)((double)state / UINT32_MAX * 65534.0 - 32767.0);
    }
    ALuint buffer;
    alGenBuffers(1, &buffer);
    alBufferData(buffer, AL_FORMAT_MONO16, noise, sizeof noise, RATE_HZ);

    ALuint *ids = calloc((size_t)sources, sizeof *ids);
    for (int i = 0; i < sources; i++) {
        alGenSources(1, &ids[i]);
        if (alGetError() != AL_NO_ERROR) fail("cannot create that many sources");
        double azimuth = 2 * M_PI * i / sources;  /* counter-clockwise from straight ahead */
        alSource3f(ids[i], AL_POSITION, (ALfloat)(-sin(azimuth) * RING_RADIUS_METRES), 0,
                   (ALfloat)(-cos(azimuth) * RING_RADIUS_METRES));
        alSourcef(ids[i], AL_GAIN, (ALfloat)(0.3 / sqrt((double)sources)));
        alSourcei(ids[i], AL_BUFFER, (ALint)buffer);
        alSourcei(ids[i], AL_LOOPING, AL_TRUE);
        alSourcei(ids[i], AL_SAMPLE_OFFSET, (i * 4801) % RATE_HZ);
    }
    alSourcePlayv(sources, ids);
    if (alGetError() != AL_NO_ERROR) fail("cannot start the sources");

    static float output[2 * BLOCK_FRAMES];
    long warmup_blocks = (long)(WARMUP_SECONDS * RATE_HZ / BLOCK_FRAMES);
    long blocks = lround(seconds * RATE_HZ / BLOCK_FRAMES);
    if (blocks < 1) blocks = 1;
    double thread_cpu = 0, process_start = 0, wall_start = 0;
    for (long b = -warmup_blocks; b < blocks; b++) {
        if (b == 0) {
            process_start = process_cpu_seconds();
            wall_start = clock_seconds(CLOCK_MONOTONIC);
        }
        double t = (double)(b + warmup_blocks + 1) * BLOCK_FRAMES / RATE_HZ;
        set_listener_yaw(YAW_DEGREES_PER_SECOND * t);
        double start = clock_seconds(CLOCK_THREAD_CPUTIME_ID);
        render_samples(device, output, BLOCK_FRAMES);
        if (b >= 0) thread_cpu += clock_seconds(CLOCK_THREAD_CPUTIME_ID) - start;
    }
    double process_cpu = process_cpu_seconds() - process_start;
    double wall = clock_seconds(CLOCK_MONOTONIC) - wall_start;
    double audio_seconds = (double)blocks * BLOCK_FRAMES / RATE_HZ;

    ALint playing = 0;
    alGetSourcei(ids[sources - 1], AL_SOURCE_STATE, &playing);
    if (playing != AL_PLAYING) fail("the sources stopped playing");

    printf("{\"peer\":\"openal-soft\",\"openal_version\":\"%s\",\"hrtf\":\"%s\","
           "\"cpu_seconds_per_audio_second\":%.4f,\"process_cpu_seconds_per_audio_second\":%.4f,"
           "\"sources\":%d,\"seconds\":%.3f,\"block_frames\":%d,\"rate_hz\":%d,\"wall_seconds\":%.3f}\n",
           alGetString(AL_VERSION), hrtf_name ? hrtf_name : "?", thread_cpu / audio_seconds,
           process_cpu / audio_seconds, sources, audio_seconds, BLOCK_FRAMES, RATE_HZ, wall);

    alSourceStopv(sources, ids);
    alDeleteSources(sources, ids);
    alDeleteBuffers(1, &buffer);
    free(ids);
    alcMakeContextCurrent(NULL);
    alcDestroyContext(context);
    alcCloseDevice(device);
    return 0;
}
