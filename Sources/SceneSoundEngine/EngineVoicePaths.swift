// The render paths' status for the server: voices per path and the governor's moves. Each
// reads an atomic the render thread writes once per block.

extension Engine {
    /// Voices rendered with per-source HRTF filters (a stereo source counts two).
    public var hrtfVoiceCount: Int { renderer.governor.hrtfVoiceCount }
    /// Voices encoded into the ambisonic bus.
    public var busVoiceCount: Int { renderer.governor.busVoiceCount }
    /// Sources the governor moved from HRTF voices to the bus, and back, since start.
    public var governorMovesToBus: Int { renderer.governor.movesToBusCount }
    public var governorMovesToHRTF: Int { renderer.governor.movesToHRTFCount }
}
