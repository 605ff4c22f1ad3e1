import Foundation
import SceneSoundPlatform
import SceneSoundProtocol
import Synchronization

/// Plays an audio file, the counterpart of `AVAudioPlayer`: any format libsndfile reads, decoded
/// once and converted to the server's output rate (libsoxr) when it first plays there.
///
/// ```swift
/// let player = try SceneSoundPlayer(contentsOf: URL(fileURLWithPath: "music.flac"))
/// player.intendedSpatialExperience = .headTracked(.scene(identifier: "x11:0x3a00007"))
/// try player.play()
/// ```
///
/// As with `AVAudioPlayer`: `play()` after `pause()` resumes where it paused; `stop()` also
/// keeps `currentTime` (Apple: "It doesn't reset the player's currentTime value to 0, so
/// playback resumes from where it stops"), while playing to the end returns it to 0;
/// `numberOfLoops` 0 plays once, n plays n + 1 times, a negative value loops until stopped.
/// The server has no pause, so pausing and stopping both end the server's stream (what it
/// buffered is dropped at once) and playing opens a new one.
///
/// Thread-safe. Playback ends with the connection, and when the player is released.
public final class SceneSoundPlayer: Sendable {
    /// The file played.
    public let url: URL
    /// The file's duration in seconds.
    public let duration: Double
    /// The file's channels.
    public let numberOfChannels: Int
    private let core: PlayerCore

    /// Decodes the file. `connection`: the server to play on; nil for the default connection
    /// (`SceneSound.defaultConnection()`), made when `play()` first needs it.
    public init(contentsOf url: URL, connection: ClientConnection? = nil) throws(ClientError) {
        let sound = try DecodedSound(path: url.path)
        self.url = url
        duration = sound.durationSeconds
        numberOfChannels = Int(sound.format.channels)
        core = PlayerCore(file: sound, connection: connection)
    }

    deinit { core.stop() }

    /// Where the sound plays; takes effect at once while playing. Default: `.headTracked(.automatic)`,
    /// at the program's window.
    public var intendedSpatialExperience: SpatialExperience {
        get { core.settings.withLock { $0.spatialExperience } }
        set { core.setSpatialExperience(newValue) }
    }

    /// Gain in dB (0 = unity; −200 to 24, clamped to that); takes effect at once while playing.
    public var volume: Float {
        get { core.settings.withLock { $0.volumeDecibels } }
        set { core.setVolume(decibels: newValue) }
    }

    /// How many times the sound repeats after the first time: 0 plays it once, a negative value
    /// loops until `stop()` or `pause()`. May change while playing.
    public var numberOfLoops: Int {
        get { core.settings.withLock { $0.numberOfLoops } }
        set { core.settings.withLock { $0.numberOfLoops = newValue } }
    }

    /// The position in seconds within the file: while playing, what the server has played so
    /// far (to within a render block); otherwise where `play()` starts. Setting it seeks.
    public var currentTime: Double {
        get { core.currentTimeSeconds }
        set { core.seek(toSeconds: newValue) }
    }

    /// Whether the sound is playing now.
    public var isPlaying: Bool { core.settings.withLock { $0.session != nil } }

    /// Starts or resumes playback from `currentTime`. Does nothing while already playing.
    /// Throws when the server cannot be reached or refuses the stream.
    public func play() throws(ClientError) { try core.play() }

    /// Pauses: `play()` resumes from here.
    public func pause() { core.stop() }

    /// Stops playback and frees the server's stream; `currentTime` stays where it stopped.
    public func stop() { core.stop() }

    /// Blocks until the current playback ends — played to its end (loops included), paused or
    /// stopped — at most `timeoutSeconds` (nil: as long as it takes). Returns false on timeout;
    /// true at once when not playing. Throws when the playback failed (server gone, …).
    @discardableResult
    public func waitUntilFinished(timeoutSeconds: Double? = nil) throws(ClientError) -> Bool {
        guard let session = core.settings.withLock({ $0.session }) else { return true }
        guard let outcome = session.ended.wait(timeoutSeconds: timeoutSeconds) else { return false }
        try outcome.get()
        return true
    }
}

/// One stream from `play()` to its end: the stream and the thread feeding it.
private final class PlaybackSession: Sendable {
    let stream: ClientStream
    /// Where the stream's first frame lies on the looped timeline (pass × frames + frame).
    let startTimelineFrame: Int
    /// Success when played to its end or stopped; the failure otherwise.
    let ended = OneShot<Result<Void, ClientError>>()

    init(stream: ClientStream, startTimelineFrame: Int) {
        self.stream = stream
        self.startTimelineFrame = startTimelineFrame
    }

    /// The timeline frame the server has played up to.
    var playedTimelineFrame: Int { startTimelineFrame + stream.bytesConsumedByServer / stream.format.bytesPerFrame }
}

/// The player's state and its feeding thread; apart from `SceneSoundPlayer` so that a thread
/// still feeding does not keep the player alive (releasing the player stops playback).
private final class PlayerCore: Sendable {
    struct Settings {
        var spatialExperience: SpatialExperience = .headTracked(.automatic)
        var volumeDecibels: Float = 0
        var numberOfLoops = 0
        /// Where `play()` starts on the looped timeline, in frames of `sound`.
        var startTimelineFrame = 0
        /// The file at the rate it last played at (the server's output rate).
        var sound: DecodedSound
        var session: PlaybackSession?
    }

    /// The file at its own rate.
    private let file: DecodedSound
    private let connection: ClientConnection?
    let settings: Mutex<Settings>
    /// Serialises play, pause, stop and the setters that talk to the server; the feeding thread
    /// never takes it.
    private let control = Mutex(())

    init(file: DecodedSound, connection: ClientConnection?) {
        self.file = file
        self.connection = connection
        settings = Mutex(Settings(sound: file))
    }

    var currentTimeSeconds: Double {
        settings.withLock { settings in
            let sound = settings.sound
            let frame = settings.session.map { min($0.playedTimelineFrame, Self.endTimelineFrame(settings.numberOfLoops, sound)) }
                ?? settings.startTimelineFrame
            return Double(frame % sound.frameCount) / Double(sound.format.rateHz)
        }
    }

    /// The timeline frame after the last pass; `Int.max` when looping forever.
    static func endTimelineFrame(_ numberOfLoops: Int, _ sound: DecodedSound) -> Int {
        numberOfLoops < 0 ? Int.max : (numberOfLoops + 1).multipliedReportingOverflow(by: sound.frameCount).partialValue
    }

    func play() throws(ClientError) {
        try control.withLock { (_) throws(ClientError) in try playLocked() }
    }

    private func playLocked() throws(ClientError) {
        let current = settings.withLock { $0 }
        guard current.session == nil else { return }
        let connection = try SharedConnection.given(self.connection)
        // Converted here rather than by the server: the position is then counted in the
        // frames the server plays.
        var sound = current.sound, startTimelineFrame = current.startTimelineFrame
        if sound.format.rateHz != connection.server.sampleRateHz {
            sound = try file.resampled(toRateHz: connection.server.sampleRateHz)
            startTimelineFrame = Int(Double(startTimelineFrame) * Double(sound.format.rateHz) / Double(current.sound.format.rateHz))
        }
        let volume = min(max(current.volumeDecibels, ProtocolLimits.volumeDecibelsRange.lowerBound), ProtocolLimits.volumeDecibelsRange.upperBound)
        let stream = try connection.openStream(StreamOpen(kind: .playback, format: sound.format,
                                                          spatialExperience: current.spatialExperience, volumeDecibels: volume))
        // Played to the end before: start over.
        let start = startTimelineFrame < Self.endTimelineFrame(current.numberOfLoops, sound) ? startTimelineFrame : 0
        let session = PlaybackSession(stream: stream, startTimelineFrame: start)
        let prepared = sound
        settings.withLock { settings in
            settings.session = session
            settings.sound = prepared
        }
        do {
            _ = try PlatformThread(detached: true) { [self] in feed(session, prepared) }
        } catch {
            settings.withLock { $0.session = nil }
            try? stream.close()
            throw .invalidArgument("cannot start the player's thread: \(error)")
        }
    }

    /// Pause and stop: the position is what the server played; its buffer is dropped.
    func stop() {
        control.withLock { _ in stopLocked() }
    }

    private func stopLocked() {
        // Taken out before the stream closes, so that the feeding thread, which then fails
        // with `streamClosed`, finds it gone and leaves the position alone.
        let taken: PlaybackSession? = settings.withLock { settings in
            guard let session = settings.session else { return nil }
            settings.session = nil
            settings.startTimelineFrame = session.playedTimelineFrame  // before closing: the credit is forgotten then
            return session
        }
        guard let session = taken else { return }
        try? session.stream.close()
        session.ended.fulfill(.success(()))
    }

    func seek(toSeconds seconds: Double) {
        control.withLock { _ in
            let wasPlaying = settings.withLock { $0.session != nil }
            stopLocked()
            settings.withLock { settings in
                let sound = settings.sound
                let frame = min(max(0, Int((seconds * Double(sound.format.rateHz)).rounded())), sound.frameCount - 1)
                let pass = settings.startTimelineFrame / sound.frameCount
                settings.startTimelineFrame = pass * sound.frameCount + frame
            }
            if wasPlaying { try? playLocked() }
        }
    }

    func setVolume(decibels: Float) {
        control.withLock { _ in
            let session = settings.withLock { settings in
                settings.volumeDecibels = decibels
                return settings.session
            }
            let clamped = min(max(decibels, ProtocolLimits.volumeDecibelsRange.lowerBound), ProtocolLimits.volumeDecibelsRange.upperBound)
            try? session?.stream.setVolume(decibels: clamped)
        }
    }

    func setSpatialExperience(_ experience: SpatialExperience) {
        control.withLock { _ in
            let (previous, session) = settings.withLock { settings in
                defer { settings.spatialExperience = experience }
                return (settings.spatialExperience, settings.session)
            }
            guard let session, previous != experience else { return }
            if previous.spatialMode == experience.spatialMode {
                try? session.stream.setScene(experience.sceneIdentifier)
            } else {
                // The spatial mode is fixed when a stream opens: go on in a new one.
                stopLocked()
                try? playLocked()
            }
        }
    }

    /// The feeding thread: writes the file pass after pass (credit paces it), then drains.
    private func feed(_ session: PlaybackSession, _ sound: DecodedSound) {
        var timeline = session.startTimelineFrame
        let frames = sound.frameCount
        // 50 ms a write: small enough that a loop count changed while playing takes effect soon.
        let chunkFrames = max(1, Int(sound.format.rateHz) / 20)
        do throws(ClientError) {
            while true {
                let end = Self.endTimelineFrame(settings.withLock { $0.numberOfLoops }, sound)
                guard timeline < end else { break }
                let frame = timeline % frames
                let count = min(chunkFrames, frames - frame, end - timeline)
                try session.stream.write(sound.bytes(frames: frame..<frame + count))
                timeline += count
            }
            try session.stream.drain()
            finish(session, .success(()))
        } catch {
            finish(session, .failure(error))
        }
    }

    /// Played to the end (position back to 0) or failed; unless pause or stop ended it first.
    private func finish(_ session: PlaybackSession, _ outcome: Result<Void, ClientError>) {
        let owned = settings.withLock { settings in
            guard settings.session === session else { return false }
            settings.session = nil
            settings.startTimelineFrame = 0
            return true
        }
        guard owned else { return }
        try? session.stream.close()
        session.ended.fulfill(outcome)
    }
}
