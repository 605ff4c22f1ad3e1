/*
 * OpenAL Soft's HRTF rendering of one static source, for measuring its timbre and near field
 * the way SceneSound's TimbreTests and NearFieldTests measure SceneSound's
 * (scripts/openal-timbre): 16-bit white noise (xorshift32, SECONDS long) played once from a
 * direction (azimuth counter-clockwise from ahead, + = left; elevation + = up) at a distance,
 * through a loopback device at 48 kHz with HRTF on and no distance attenuation. Writes the
 * input (mono) and then the output (stereo, interleaved, the input's length plus 0.1 s of tail)
 * as 32-bit floats to stdout.
 *
 * Usage: openal_render AZIMUTH_DEGREES ELEVATION_DEGREES DISTANCE_METRES SECONDS
 */
#include <AL/al.h>
#include <AL/alc.h>
#include <AL/alext.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

enum { RATE_HZ = 48000, BLOCK_FRAMES = 256 };

static void fail(const char *message) {
    fprintf(stderr, "openal_render: %s\n", message);
    exit(1);
}

int main(int argc, char **argv) {
    if (argc != 5) fail("usage: openal_render AZIMUTH_DEGREES ELEVATION_DEGREES DISTANCE_METRES SECONDS");
    double azimuth = atof(argv[1]) * M_PI / 180, elevation = atof(argv[2]) * M_PI / 180;
    double distance = atof(argv[3]), seconds = atof(argv[4]);
    if (distance <= 0 || seconds <= 0 || seconds > 60) fail("DISTANCE_METRES must be above 0, SECONDS within 0…60");

    LPALCLOOPBACKOPENDEVICESOFT loopback_open =
        (LPALCLOOPBACKOPENDEVICESOFT)alcGetProcAddress(NULL, "alcLoopbackOpenDeviceSOFT");
    LPALCRENDERSAMPLESSOFT render_samples =
        (LPALCRENDERSAMPLESSOFT)alcGetProcAddress(NULL, "alcRenderSamplesSOFT");
    if (!alcIsExtensionPresent(NULL, "ALC_SOFT_loopback") || !loopback_open || !render_samples)
        fail("this OpenAL has no ALC_SOFT_loopback");
    ALCdevice *device = loopback_open(NULL);
    if (!device) fail("cannot open a loopback device");
    ALCint attributes[] = {
        ALC_FORMAT_CHANNELS_SOFT, ALC_STEREO_SOFT, ALC_FORMAT_TYPE_SOFT, ALC_FLOAT_SOFT,
        ALC_FREQUENCY, RATE_HZ, ALC_HRTF_SOFT, ALC_TRUE, 0,
    };
    ALCcontext *context = alcCreateContext(device, attributes);
    if (!context || !alcMakeContextCurrent(context)) fail("cannot create the context");
    ALCint hrtf_status = 0;
    alcGetIntegerv(device, ALC_HRTF_STATUS_SOFT, 1, &hrtf_status);
    if (hrtf_status != ALC_HRTF_ENABLED_SOFT) fail("HRTF is not enabled on the loopback device");
    alDistanceModel(AL_NONE);  /* the distance law's gain left out, as the tests take it out */

    long frames = lround(seconds * RATE_HZ);
    int16_t *noise = malloc((size_t)frames * sizeof *noise);
    float *input = malloc((size_t)frames * sizeof *input);
    uint32_t state = 0x9E3779B9u;
    for (long i = 0; i < frames; i++) {
        state ^= state << 13; state ^= state >> 17; state ^= state << 5;
        noise[i] = (int16_t)((double)state / UINT32_MAX * 65534.0 - 32767.0);
        input[i] = (float)noise[i] / 32768.0f;
    }
    ALuint buffer, source;
    alGenBuffers(1, &buffer);
    alBufferData(buffer, AL_FORMAT_MONO16, noise, (ALsizei)(frames * sizeof *noise), RATE_HZ);
    alGenSources(1, &source);
    alSource3f(source, AL_POSITION, (ALfloat)(-sin(azimuth) * cos(elevation) * distance),
               (ALfloat)(sin(elevation) * distance), (ALfloat)(-cos(azimuth) * cos(elevation) * distance));
    alSourcei(source, AL_BUFFER, (ALint)buffer);
    alSourcePlay(source);
    if (alGetError() != AL_NO_ERROR) fail("cannot start the source");

    fwrite(input, sizeof *input, (size_t)frames, stdout);
    long total = frames + RATE_HZ / 10;
    static float output[2 * BLOCK_FRAMES];
    for (long done = 0; done < total; done += BLOCK_FRAMES) {
        render_samples(device, output, BLOCK_FRAMES);
        long n = total - done < BLOCK_FRAMES ? total - done : BLOCK_FRAMES;
        fwrite(output, sizeof *output, (size_t)(2 * n), stdout);
    }
    alDeleteSources(1, &source);
    alDeleteBuffers(1, &buffer);
    alcMakeContextCurrent(NULL);
    alcDestroyContext(context);
    alcCloseDevice(device);
    free(noise);
    free(input);
    return 0;
}
