import Foundation
import SceneSoundMedia
import SceneSoundProtocol
import SceneSoundThemes

/// What `system` and `alert` play: a sound-theme event id resolved to a file, or a file
/// given directly, decoded and ready to upload.
struct ThemeSoundFile {
    /// The file, or nil when the theme disables the sound (then nothing is played).
    let path: String?

    /// NAME|FILE: a path (contains `/`, or names an existing file) is a file; anything else an
    /// event id looked up in `theme`. An unknown id is one line naming what was searched.
    init(nameOrFile: String, theme: String, environment: [String: String] = ProcessInfo.processInfo.environment) throws {
        if nameOrFile.contains("/") || FileManager.default.fileExists(atPath: nameOrFile) {
            path = nameOrFile
            return
        }
        switch SoundTheme.lookup(name: nameOrFile, theme: theme, environment: environment) {
        case .found(let found):
            path = found
        case .disabled:
            path = nil
        case .notFound(let searched):
            throw RuntimeError("no sound named '\(nameOrFile)' in theme '\(theme)' (searched \(searched.joined(separator: ", "))); pass a sound-theme event id such as 'bell', another --theme, or a file")
        }
    }

    /// The name the sample is cached under: it changes when the file does, so an edited theme
    /// file is uploaded again. At most 255 bytes, as the protocol allows.
    static func cacheName(for path: String) -> String {
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

    /// The file decoded to f32le at its own rate (mono or stereo; more channels are mixed to mono).
    static func decode(path: String) throws -> (format: AudioFormat, pcm: [UInt8]) {
        let decoded = try DecodedFile(path: path)
        return (decoded.format, decoded.bytes(frames: 0..<decoded.frameCount))
    }
}
