import Foundation
import SceneSoundProtocol
import SceneSoundThemes

extension SceneSound {
    /// Plays a short system sound, the counterpart of `AudioServicesPlaySystemSound(_:spatialExperience:)`.
    ///
    /// `name` is a freedesktop sound-theme event id (`bell`, `message-new-instant`, …), looked up
    /// in `$SCENESOUND_THEME` (else `freedesktop`) as the Sound Theme and Naming specifications
    /// say, or the path of any audio file libsndfile reads (it contains `/`). The sound is
    /// decoded and uploaded into the server's sample cache the first time this connection plays
    /// it, and played from the cache afterwards (uploaded again if the cache evicted it).
    ///
    /// Returns once the server has started the sound; it plays on even if the caller moves on,
    /// but ends with the connection, so a program about to exit waits for it
    /// (`SoundPlayback.waitUntilFinished`). Returns nil when the theme disables the sound.
    @discardableResult
    public static func playSystemSound(_ name: String,
                                       spatialExperience: SpatialExperience = .headTracked(.automatic)) throws(ClientError) -> SoundPlayback? {
        try playSample(name, kind: .system, spatialExperience: spatialExperience)
    }

    /// Plays an alert sound, the counterpart of `AudioServicesPlayAlertSound`: like
    /// `playSystemSound(_:spatialExperience:)`, and the server ducks playback streams while it
    /// plays and never degrades it under load.
    @discardableResult
    public static func playAlertSound(_ name: String,
                                      spatialExperience: SpatialExperience = .headTracked(.automatic)) throws(ClientError) -> SoundPlayback? {
        try playSample(name, kind: .alert, spatialExperience: spatialExperience)
    }

    private static func playSample(_ name: String, kind: StreamKind,
                                   spatialExperience: SpatialExperience) throws(ClientError) -> SoundPlayback? {
        guard let path = try ThemeSound.path(for: name) else { return nil }
        let shared = try SharedConnection.current()
        let connection = shared.connection
        let sampleName = ThemeSound.cacheName(for: path)
        let play = SamplePlay(name: sampleName, kind: kind, spatialExperience: spatialExperience)
        if !shared.uploadedSamples.withLock({ $0.contains(sampleName) }) {
            try upload(path, as: sampleName, over: shared)
        }
        do {
            return SoundPlayback(playID: try connection.playSample(play), connection: connection)
        } catch where error.serverCode == .unknownSound {
            // The server's cache is bounded: it evicted the sample, or the server restarted.
            try upload(path, as: sampleName, over: shared)
            return SoundPlayback(playID: try connection.playSample(play), connection: connection)
        }
    }

    private static func upload(_ path: String, as sampleName: String, over shared: SharedConnection) throws(ClientError) {
        let sound = try DecodedSound(path: path, channels: ProtocolLimits.stereoChannelsRange)
        try shared.connection.uploadSample(name: sampleName, format: sound.format, pcm: sound.bytes(frames: 0..<sound.frameCount))
        shared.uploadedSamples.withLock { _ = $0.insert(sampleName) }
    }
}

/// A system or alert sound the server is playing.
public struct SoundPlayback: Sendable {
    /// The server's id for this play.
    public let playID: UInt32
    let connection: ClientConnection

    /// Blocks until the sound has been played (nil timeout: as long as it takes) and returns how
    /// it ended: `completed`, or `interrupted` when the server stopped it.
    @discardableResult
    public func waitUntilFinished(timeoutSeconds: Double? = nil) throws(ClientError) -> PlaybackEndReason {
        try connection.waitForPlaybackEnd(playID: playID, timeoutSeconds: timeoutSeconds)
    }
}

/// Where a system or alert sound's audio comes from, and the name it is cached under; the
/// `scenesound system` and `alert` verbs use the same.
public enum ThemeSound {
    /// A path (it contains `/`, or names an existing file) is a file; anything else an event id
    /// looked up in `theme`, by default `$SCENESOUND_THEME`, else `freedesktop`. Nil when the
    /// theme disables it.
    public static func path(for nameOrFile: String, theme requestedTheme: String? = nil,
                            environment: [String: String] = ProcessInfo.processInfo.environment) throws(ClientError) -> String? {
        if nameOrFile.contains("/") || FileManager.default.fileExists(atPath: nameOrFile) { return nameOrFile }
        let requested = requestedTheme ?? environment["SCENESOUND_THEME"] ?? ""
        let theme = requested.isEmpty ? SoundTheme.fallbackThemeName : requested
        switch SoundTheme.lookup(name: nameOrFile, theme: theme, environment: environment) {
        case .found(let path): return path
        case .disabled: return nil
        case .notFound(let searched):
            throw .invalidArgument("no sound named '\(nameOrFile)' in theme '\(theme)' (searched \(searched.joined(separator: ", "))); pass a sound-theme event id such as 'bell', or a file")
        }
    }

    /// The cache key, as `scenesound system` makes it: it changes when the file does (path,
    /// modification time, size), so an edited file is uploaded again. At most 255 bytes.
    public static func cacheName(for path: String) -> String {
        let attributes = try? FileManager.default.attributesOfItem(atPath: path)
        let modified = (attributes?[.modificationDate] as? Date)?.timeIntervalSince1970 ?? 0
        let size = (attributes?[.size] as? NSNumber)?.intValue ?? 0
        let full = "\(path)#\(Int(modified))-\(size)"
        guard full.utf8.count > 255 else { return full }
        // FNV-1a of the whole key keeps long paths distinct; the file name keeps it readable.
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in full.utf8 { hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01b3 }
        let file = String((path as NSString).lastPathComponent.utf8.prefix(200)) ?? "sound"
        return "\(file)#\(String(hash, radix: 16))"
    }
}
