/// The release this build is: what `--version` and the C library's `scenesound_version()`
/// say, what the server names itself in its welcome and status, and the Debian packages'
/// version (debian/changelog's top entry must carry the same; ReleaseVersionTests checks it).
public enum SceneSoundRelease {
    /// Static, for the C library to hand out as a `const char *`.
    public static let staticVersion: StaticString = "0.1.0"
    public static var version: String { staticVersion.description }
}
