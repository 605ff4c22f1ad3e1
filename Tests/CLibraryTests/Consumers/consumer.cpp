// A C++ consumer of libscenesound: RAII handles, a push stream of a tone, status.
// Built with -Werror to prove the header is clean C++; exits 0 when the tone was played.
#include <scenesound.h>

#include <cmath>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

namespace {

struct ClientDeleter {
    void operator()(scenesound_client *client) const { scenesound_disconnect(client); }
};
struct StreamDeleter {
    void operator()(scenesound_stream *stream) const { scenesound_stream_close(stream); }
};
using Client = std::unique_ptr<scenesound_client, ClientDeleter>;
using Stream = std::unique_ptr<scenesound_stream, StreamDeleter>;

int check(const char *what, int status)
{
    if (status != SCENESOUND_OK) {
        std::fprintf(stderr, "consumer: %s: %s (%s)\n", what, scenesound_strerror(status),
                     scenesound_last_error_message());
    }
    return status;
}

}  // namespace

int main(int argc, char **argv)
{
    const double frequency_hz = argc > 1 ? std::stod(argv[1]) : 1000.0;
    const uint32_t rate_hz = 48000;
    const double pi = 3.14159265358979323846;
    scenesound_client *raw_client = nullptr;
    if (check("connect", scenesound_connect(nullptr, "consumer.cpp", &raw_client))) return 1;
    Client client(raw_client);

    scenesound_stream *raw_stream = nullptr;
    if (check("open", scenesound_stream_open(client.get(), SCENESOUND_KIND_PLAYBACK, SCENESOUND_FORMAT_F32LE, rate_hz, 2,
                                             "consumer-cpp", SCENESOUND_SPATIAL_OFF, 0.0f, 0, &raw_stream)))
        return 1;
    Stream stream(raw_stream);

    std::vector<float> pcm(rate_hz / 2 * 2);  // 0.5 s, stereo
    for (std::size_t i = 0; i < pcm.size() / 2; i++) {
        const float value = static_cast<float>(0.25 * std::sin(2 * pi * frequency_hz * static_cast<double>(i) / rate_hz));
        pcm[2 * i] = pcm[2 * i + 1] = value;
    }
    if (check("write", scenesound_stream_write(stream.get(), pcm.data(), pcm.size() * sizeof(float)))) return 1;
    if (check("drain", scenesound_stream_drain(stream.get()))) return 1;

    if (check("device spatial", scenesound_set_device_spatial(client.get(), SCENESOUND_DEVICE_SPATIAL_FIXED))) return 1;
    if (scenesound_set_device_spatial(client.get(), 7) != SCENESOUND_E_INVALID_ARGUMENT) {
        std::fprintf(stderr, "consumer: device spatial 7 was not refused\n");
        return 1;
    }
    if (check("device render", scenesound_set_device_render(client.get(), SCENESOUND_DEVICE_RENDER_SPEAKERS))) return 1;
    if (scenesound_set_device_render(client.get(), 3) != SCENESOUND_E_INVALID_ARGUMENT) {
        std::fprintf(stderr, "consumer: device render 3 was not refused\n");
        return 1;
    }
    char *json = nullptr;
    if (check("status", scenesound_status_json(client.get(), &json))) return 1;
    const std::string status(json);
    scenesound_free(json);
    std::printf("consumer: played %.0f Hz; status has %zu bytes; library %s\n", frequency_hz, status.size(),
                scenesound_version());
    // The rendering, with the mode just chosen (no device known on this output: it applies until one is).
    return status.find("\"streams\"") == std::string::npos || status.find("\"spatial\":\"fixed\"") == std::string::npos
        || status.find("\"method\":\"speakers\"") == std::string::npos;
}
