import ArgumentParser
import Foundation
import SceneSoundClient
import SceneSoundProtocol
import SceneSoundThemes

/// The options `system` and `alert` share.
struct SampleSoundOptions: ParsableArguments {
    @Argument(help: ArgumentHelp("A freedesktop sound-theme event id (bell, dialog-warning, message-new-instant, …) or an audio file.", valueName: "NAME|FILE"))
    var sound: String

    @Option(name: .customLong("scene"), help: ArgumentHelp("The scene to play in (default: straight ahead).", valueName: "ID"))
    var sceneID: String?

    @Option(name: .customLong("window"), help: ArgumentHelp("Play at this window: an X11 window (the scene x11:0x<hex>), a native Wayland one (wayland:ID), or the active one.", valueName: "XID|wayland:ID|active"))
    var window: WindowSelection?

    @Option(name: .customLong("theme"), help: ArgumentHelp("The sound theme NAME is looked up in (default: $SCENESOUND_THEME, else freedesktop).", valueName: "THEME"))
    var theme: String?

    @Option(name: .customLong("volume"), parsing: .unconditional, help: ArgumentHelp("Gain in dB (-200 to 24; 0 = unity).", valueName: "DB"))
    var volumeDecibels: Float = 0

    @Option(name: .customLong("spatial"), help: ArgumentHelp("anchored (at the scene, head-tracked), head-locked, or off (plain stereo).", valueName: "MODE"))
    var spatialMode: SpatialMode = .anchored

    @OptionGroup var server: ServerOptions

    func validate() throws {
        if sceneID != nil && window != nil { throw ValidationError("--scene and --window name the same thing; pass one of them") }
        if let sceneID { try validateSceneID(sceneID, option: "--scene") }
        try validateVolume(volumeDecibels)
    }

    var themeName: String {
        if let theme, !theme.isEmpty { return theme }
        let fromEnvironment = ProcessInfo.processInfo.environment["SCENESOUND_THEME"] ?? ""
        return fromEnvironment.isEmpty ? SoundTheme.fallbackThemeName : fromEnvironment
    }

    /// Resolves, plays (uploading only when the server does not have the sample) and waits
    /// until the last sample has been played. A disabled theme sound plays nothing.
    func play(kind: StreamKind, demandAttention: Bool = false) throws {
        // Resolve first: an unknown name is reported without needing a server.
        let file = try ThemeSoundFile(nameOrFile: sound, theme: themeName)
        guard let path = file.path else { return }
        let name = ThemeSound.cacheName(for: path)
        let scene = try window?.sceneID(server: server) ?? sceneID ?? ""
        let connection = try server.connect()
        defer { connection.close() }
        let request = SamplePlay(name: name, kind: kind, spatialMode: spatialMode, volumeDecibels: volumeDecibels,
                                 sceneID: scene, demandAttention: demandAttention)
        let playID: UInt32
        do {
            playID = try connection.playSample(request)
        } catch where error.serverCode == .unknownSound {
            let (format, pcm) = try ThemeSoundFile.decode(path: path)
            try withClientErrors { () throws(ClientError) in try connection.uploadSample(name: name, format: format, pcm: pcm) }
            playID = try withClientErrors { () throws(ClientError) in try connection.playSample(request) }
        } catch {
            throw RuntimeError(error.description)
        }
        let reason = try withClientErrors { () throws(ClientError) in try connection.waitForPlaybackEnd(playID: playID, timeoutSeconds: 60) }
        if reason == .interrupted { throw RuntimeError("the sound was interrupted (server shutdown or output failure)") }
    }
}

struct SystemSoundCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "system",
        abstract: "Play a short system sound from the server's sample cache.",
        discussion: """
            NAME is looked up in the sound theme (freedesktop Sound Theme and Naming specs: \
            $XDG_DATA_HOME and $XDG_DATA_DIRS, inherited themes, your locale, shorter names as \
            fallback). The sound is uploaded once and played from the server's cache afterwards. \
            Exits 0 once the sound has been played; 1 when the name is unknown.
            """)

    @OptionGroup var options: SampleSoundOptions

    func run() throws { try options.play(kind: .system) }
}

struct AlertSoundCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "alert",
        abstract: "Play an alert sound: like a system sound, and playback streams are ducked while it plays.",
        discussion: "NAME is resolved as for 'scenesound system'. Exits 0 once the alert has been played.")

    @OptionGroup var options: SampleSoundOptions

    @Flag(name: .customLong("flash"), help: "Also flag the window for attention (_NET_WM_STATE_DEMANDS_ATTENTION).")
    var flash = false

    func run() throws {
        try options.play(kind: .alert, demandAttention: flash)
    }

}
