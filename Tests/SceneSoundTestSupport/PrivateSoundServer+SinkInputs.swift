extension PrivateSoundServer {
    /// Sink inputs as (index, sink index, application name).
    public func sinkInputs() throws -> [(index: Int, sink: Int, application: String)] {
        try list("sink-inputs").compactMap { input in
            guard let index = input["index"] as? Int, let sink = input["sink"] as? Int else { return nil }
            let properties = input["properties"] as? [String: Any] ?? [:]
            return (index, sink, properties["application.name"] as? String ?? "")
        }
    }

    public func sinkOf(application: String) throws -> Int? {
        try sinkInputs().first { $0.application == application }?.sink
    }

    /// The channel map an application's stream plays with (pactl's `front-left,front-right,…`).
    public func channelMapOf(application: String) throws -> String? {
        try list("sink-inputs").first {
            (($0["properties"] as? [String: Any])?["application.name"] as? String) == application
        }?["channel_map"] as? String
    }

    /// Sinks whose properties carry `key` (a program's mark on the sinks it made).
    public func sinks(carrying key: String) throws -> [[String: Any]] {
        try list("sinks").filter { ($0["properties"] as? [String: Any])?[key] != nil }
    }
}
