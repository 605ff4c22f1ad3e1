import Foundation
import SceneSoundMedia
import SceneSoundClient
import SceneSoundProtocol

/// What `system` and `alert` play: a sound-theme event id resolved to a file, or a file
/// given directly, decoded and ready to upload.
struct ThemeSoundFile {
    /// The file, or nil when the theme disables the sound (then nothing is played).
    let path: String?

    /// NAME|FILE: a path (contains `/`, or names an existing file) is a file; anything else an
    /// event id looked up in `theme` (`ThemeSound`, the client library's lookup). An unknown id
    /// is one line naming what was searched.
    init(nameOrFile: String, theme: String, environment: [String: String] = ProcessInfo.processInfo.environment) throws {
        do {
            path = try ThemeSound.path(for: nameOrFile, theme: theme, environment: environment)
        } catch {
            throw RuntimeError(error.description)
        }
    }

    /// The file decoded to f32le at its own rate (mono or stereo; more channels are mixed to mono).
    static func decode(path: String) throws -> (format: AudioFormat, pcm: [UInt8]) {
        let decoded = try DecodedFile(path: path)
        return (decoded.format, decoded.bytes(frames: 0..<decoded.frameCount))
    }
}
