import ArgumentParser
import Foundation
import SceneSoundClient
import SceneSoundProtocol

struct PlayCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "play",
        abstract: "Play a sound file, or raw PCM from standard input, on the SceneSound server.",
        discussion: """
            FILE is anything libsndfile decodes (WAV, FLAC, Ogg Vorbis, AIFF, …), sent at its own \
            rate, with up to 8 channels (surround as virtual speakers around the scene: the file's \
            channel map, else WAVE order FL FR FC LFE BL BR SL SR). With '-', raw \
            interleaved PCM is read from standard input: --format, --rate and --channels (or \
            --channel-map, which also says which speaker each channel feeds) are then required. Exits 0 once the whole sound has been played (the server drained it). \
            With --loop the sound repeats until interrupted.
            """)

    @Argument(help: ArgumentHelp("An audio file, or - for raw PCM on standard input.", valueName: "FILE|-"))
    var input: String

    @Option(name: .customLong("scene"), help: ArgumentHelp("The scene to play in (default: this program's window, else straight ahead).", valueName: "ID"))
    var sceneID: String?

    @Option(name: .customLong("window"), help: ArgumentHelp("Play at this window: an X11 window (the scene x11:0x<hex>), a native Wayland one (wayland:ID), or the active one.", valueName: "XID|wayland:ID|active"))
    var window: WindowSelection?

    @Option(name: .customLong("volume"), parsing: .unconditional, help: ArgumentHelp("Gain in dB (-200 to 24; 0 = unity).", valueName: "DB"))
    var volumeDecibels: Float = 0

    @Flag(name: .customLong("loop"), help: "Repeat the sound until interrupted.")
    var loop = false

    @Option(name: .customLong("spatial"), help: ArgumentHelp("anchored (at the scene, head-tracked), head-locked, or off (plain stereo).", valueName: "MODE"))
    var spatialMode: SpatialMode = .anchored

    @Option(name: .customLong("format"), help: ArgumentHelp("With -: the sample format, s16le, s32le or f32le.", valueName: "FORMAT"))
    var rawFormat: String?

    @Option(name: .customLong("rate"), parsing: .unconditional, help: ArgumentHelp("With -: the sample rate (8000 to 192000).", valueName: "HZ"))
    var rawRateHz: Int?

    @Option(name: .customLong("channels"), parsing: .unconditional, help: ArgumentHelp("With -: 1 to 8 (3 to 8 in WAVE order: FL FR FC LFE BL BR SL SR).", valueName: "N"))
    var rawChannels: Int?

    @Option(name: .customLong("channel-map"), help: ArgumentHelp("With -: the speaker of each channel, in order, as paplay names them or in short (e.g. front-left,front-right,side-left,side-right,front-center,lfe or FL,FR,SL,SR,FC,LFE); default: WAVE order for the count.", valueName: "NAMES"))
    var rawChannelMap: String?

    @OptionGroup var server: ServerOptions

    private var readsStandardInput: Bool { input == "-" }

    func validate() throws {
        if sceneID != nil && window != nil { throw ValidationError("--scene and --window name the same thing; pass one of them") }
        if let sceneID { try validateSceneID(sceneID, option: "--scene") }
        try validateVolume(volumeDecibels)
        if readsStandardInput {
            _ = try rawAudioFormat()
        } else if rawFormat != nil || rawRateHz != nil || rawChannels != nil || rawChannelMap != nil {
            throw ValidationError("--format, --rate, --channels and --channel-map describe raw PCM and go only with '-'")
        }
    }

    /// The format of raw PCM on standard input, from the three options.
    private func rawAudioFormat() throws -> AudioFormat {
        let layout = try rawChannelLayout()
        guard let rawFormat, let rawRateHz, let rawChannels = rawChannels ?? layout?.channelCount else {
            throw ValidationError("reading raw PCM from '-' needs --format s16le|s32le|f32le, --rate HZ and --channels 1-8")
        }
        if let layout, layout.channelCount != rawChannels {
            throw ValidationError("--channel-map names \(layout.channelCount) channels, --channels says \(rawChannels)")
        }
        guard let sampleFormat = SampleFormat(argumentName: rawFormat) else {
            throw ValidationError("--format \(rawFormat) is not supported (accepted: s16le, s32le, f32le)")
        }
        guard let rate = UInt32(exactly: rawRateHz), ProtocolLimits.rateHzRange.contains(rate) else {
            throw ValidationError("--rate \(rawRateHz) is out of range (accepted: 8000 to 192000 Hz)")
        }
        guard let channels = UInt8(exactly: rawChannels), ProtocolLimits.channelsRange.contains(channels) else {
            throw ValidationError("--channels \(rawChannels) is not supported (accepted: 1 to 8)")
        }
        return AudioFormat(sampleFormat: sampleFormat, rateHz: rate, channels: channels)
    }

    /// --channel-map, parsed; a one-line error naming the bad name and the accepted ones.
    private func rawChannelLayout() throws -> RawChannelMap? {
        guard let rawChannelMap else { return nil }
        do {
            return try RawChannelMap(rawChannelMap)
        } catch {
            throw ValidationError("--channel-map: \(error)")
        }
    }

    func run() throws {
        // The input first: a missing file is reported without needing a server.
        var source: any PCMSource = readsStandardInput
            ? StandardInputSource(format: try rawAudioFormat(), channelMap: try rawChannelLayout()?.protocolMap)
            : try DecodedFileSource(path: input)
        let scene = try window?.sceneID(server: server) ?? sceneID ?? ""
        let connection = try server.connect()
        defer { connection.close() }
        let options = StreamOpen(kind: .playback, format: source.format, spatialMode: spatialMode, loop: loop,
                                 volumeDecibels: volumeDecibels, sceneID: scene, channelMap: source.channelMap)
        let stream = try withClientErrors { () throws(ClientError) in try connection.openStream(options) }

        let progress = PlaybackProgress(totalSeconds: source.durationSeconds)
        progress.start()
        var playedEverything = false
        defer { progress.finish(playedEverything: playedEverything) }
        let bytesPerSecond = Double(source.format.bytesPerFrame) * Double(source.format.rateHz)
        while let chunk = try source.nextChunk() {
            try withClientErrors { () throws(ClientError) in try stream.write(chunk) }
            progress.sent(seconds: Double(chunk.count) / bytesPerSecond)
        }
        // Answered once the last sample has been rendered (for --loop: after the first pass).
        try withClientErrors { () throws(ClientError) in try stream.drain() }
        if loop {
            // The server repeats the sound until the stream closes: until interrupted, or
            // until the server ends the stream.
            let reason = stream.waitUntilStopped(timeoutSeconds: nil)
            throw RuntimeError(reason?.description ?? "the stream stopped")
        }
        playedEverything = true
        try source.checkComplete()
        try withClientErrors { () throws(ClientError) in try stream.close() }
    }
}
