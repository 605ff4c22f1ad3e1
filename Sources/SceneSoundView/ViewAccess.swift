/// Who may use the view (docs/ARCHITECTURE.md, "The browser view"): the page and its socket are
/// served on loopback only, and every request must carry the secret token (in the URL `view`
/// prints, then in a cookie), name the loopback address and port as its `Host` (a DNS-rebinding
/// page names its own host) and, when it has an `Origin`, come from this very origin (a
/// cross-site request or WebSocket names another). Pure rules, no I/O: the server asks them.
public struct ViewAccess: Sendable {
    /// 128 bits as 32 lowercase hex digits.
    public let token: String
    public let port: Int

    public init(token: String, port: Int) {
        self.token = token
        self.port = port
    }

    /// A fresh token from the system's random source (`SystemRandomNumberGenerator`: getrandom).
    public static func randomToken() -> String {
        var generator = SystemRandomNumberGenerator()
        return (0..<16).map { _ in
            let byte = UInt8.random(in: 0 ... .max, using: &generator)
            return String(byte >> 4, radix: 16) + String(byte & 0xf, radix: 16)
        }.joined()
    }

    /// The cookie's name: per port, since browsers keep cookies per host, not per port.
    public var cookieName: String { "scenesound_view_\(port)" }

    /// The hosts this server answers as.
    public var allowedHosts: [String] { ["127.0.0.1:\(port)", "localhost:\(port)"] }

    public var allowedOrigins: [String] { allowedHosts.map { "http://" + $0 } }

    /// `Set-Cookie` for a page that came with the token: the page's scripts never see it
    /// (HttpOnly), and no other site's request carries it (SameSite=Strict).
    public var setCookieValue: String { "\(cookieName)=\(token); Path=/; HttpOnly; SameSite=Strict" }

    public enum Decision: Equatable, Sendable {
        /// `tokenInURL`: the token came in the query (answer with the cookie and a redirect to
        /// the same path without it).
        case allow(tokenInURL: Bool)
        case refuse(status: Int, reason: String)
    }

    /// The rules, in order: Host, Origin, token. `headers` as received (names in any case).
    public func decide(uri: String, headers: [(name: String, value: String)]) -> Decision {
        func values(_ name: String) -> [String] { headers.filter { $0.name.lowercased() == name }.map(\.value) }
        let hosts = values("host")
        guard hosts.count == 1, allowedHosts.contains(hosts[0].lowercased()) else {
            return .refuse(status: 421, reason: "the Host is not this server's loopback address and port")
        }
        let origins = values("origin")
        guard origins.count <= 1, origins.allSatisfy({ allowedOrigins.contains($0.lowercased()) }) else {
            return .refuse(status: 403, reason: "the request comes from another site (Origin)")
        }
        if let query = Self.queryValue("token", in: uri), Self.constantTimeEqual(query, token) {
            return .allow(tokenInURL: true)
        }
        let cookies = values("cookie").flatMap { $0.split(separator: ";") }.compactMap { pair -> (String, String)? in
            let parts = pair.split(separator: "=", maxSplits: 1)
            guard parts.count == 2 else { return nil }
            return (parts[0].trimmingCharacters(), parts[1].trimmingCharacters())
        }
        if cookies.contains(where: { $0.0 == cookieName && Self.constantTimeEqual($0.1, token) }) {
            return .allow(tokenInURL: false)
        }
        return .refuse(status: 403, reason: "no valid token: open the URL 'scenesound view' printed")
    }

    /// The path of a request URI, without its query.
    public static func path(of uri: String) -> String {
        String(uri.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false).first ?? "")
    }

    static func queryValue(_ name: String, in uri: String) -> String? {
        let parts = uri.split(separator: "?", maxSplits: 1)
        guard parts.count == 2 else { return nil }
        for pair in parts[1].split(separator: "&") {
            let kv = pair.split(separator: "=", maxSplits: 1)
            if kv.count == 2, kv[0] == name { return String(kv[1]) }
        }
        return nil
    }

    /// Compares without stopping at the first difference.
    static func constantTimeEqual(_ a: String, _ b: String) -> Bool {
        let x = Array(a.utf8), y = Array(b.utf8)
        guard x.count == y.count else { return false }
        var difference: UInt8 = 0
        for index in x.indices { difference |= x[index] ^ y[index] }
        return difference == 0
    }
}

extension Substring {
    func trimmingCharacters() -> String {
        String(self.drop(while: { $0 == " " || $0 == "\t" }).reversed().drop(while: { $0 == " " || $0 == "\t" }).reversed())
    }
}
