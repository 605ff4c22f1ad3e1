/// Limits and settings of the socket server. Every limit is configurable (flags, config file).
import SceneSoundDSP
import SceneSoundProtocol

public struct ServerConfiguration: Sendable {
    public var socketPath: String
    public var serverName = "scenesoundd \(SceneSoundRelease.version)"
    public var maximumClients = 64
    public var maximumStreamsPerClient = 16
    public var maximumFrameBytes = 262_144
    /// How much audio the server buffers per stream (and so the most credit outstanding).
    public var streamBufferSeconds = 0.4
    public var maximumSampleBytes = 16 * 1024 * 1024
    /// Accept connections from root as well as from the server's own user.
    public var allowRoot = false
    /// Messages a client may send per second (audio data excepted: credit paces it).
    public var maximumMessagesPerSecond = 2000
    /// opentrack datagrams decoded per second (bursts of a second's worth); more are dropped
    /// and counted. opentrack sends at its tracker's frame rate, 30 to 250 a second.
    public var maximumOpenTrackPacketsPerSecond = 1000
    /// OSC datagrams decoded per second, the same way.
    public var maximumOSCPacketsPerSecond = 1000
    /// What the renderer follows of the head, prediction, automatic recentering.
    public var headTracking = HeadTrackingSettings()
    /// Engine commands that may wait for the render thread (its queue full) before new streams
    /// and plays are refused with `limit_exceeded`.
    public var maximumWaitingEngineCommands = 4096
    /// How long a client may leave over 1 MiB of our messages unread before it is dropped.
    public var unreadGraceSeconds = 5
    /// How often the server grants credit and answers drains.
    public var tickSeconds = 0.004
    /// The sample cache, system and alert sounds (SampleConfiguration.swift).
    public var samples = SampleConfiguration()
    /// The headphone equalization to start with (`--headphone-eq`), built at the engine's rate.
    public var headphoneEQ: HeadphoneEQFilter?
    /// Loads and prepares the HRTF set at a path for HRTF_USE, off the event loop (the daemon's
    /// loader: equalized, cached, the ITD scaled to the head as at start); nil: the set cannot
    /// be switched. Its error's description is one line naming the file.
    public var hrtfLoader: (@Sendable (String) throws -> PreparedHRTF)?
    /// Told the path of each set switched to (the daemon keeps the choice across restarts).
    public var hrtfChosen: (@Sendable (String) -> Void)?

    /// `--render`: how the mix is rendered for the output device.
    public var renderPreference = RenderPreference.auto
    /// `--device-defaults`: what a device with no choice of its own starts with.
    public var deviceDefaults = DeviceSettings()
    /// Where each device's settings are kept (`DeviceSettingsStore.defaultPath`); nil: only
    /// while the server runs.
    public var deviceSettingsPath: String?

    public init(socketPath: String) { self.socketPath = socketPath }
}
