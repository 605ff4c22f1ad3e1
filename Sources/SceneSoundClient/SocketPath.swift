/// Where the server's socket is: the same rule as `scenesoundd --socket` (SPEC.md section 1).
public enum SocketPath {
    /// The environment variable that names the socket directly.
    public static let environmentVariable = "SCENESOUND_SOCKET"

    /// `explicit` (from `--socket`) if given, else `$SCENESOUND_SOCKET`, else
    /// `$XDG_RUNTIME_DIR/scenesound/socket`. Empty values count as unset.
    public static func resolve(explicit: String?, environment: [String: String]) throws(ClientError) -> String {
        if let explicit, !explicit.isEmpty { return explicit }
        if let path = environment[environmentVariable], !path.isEmpty { return path }
        if let runtimeDirectory = environment["XDG_RUNTIME_DIR"], !runtimeDirectory.isEmpty {
            let base = runtimeDirectory.hasSuffix("/") ? String(runtimeDirectory.dropLast()) : runtimeDirectory
            return base + "/scenesound/socket"
        }
        throw .noSocketPath
    }
}
