import Testing

extension SurroundSink {
    /// Records the sink and checks each of its six channels carries `ChannelTaggedTone`'s level
    /// for that channel (within 5 %): the output's channel c reached the sink's channel c. One
    /// more take if the first fails (a graph reconfigured by parec joining it can leave a gap).
    public static func expectChannelsLandInPlace(on server: PrivateSoundServer, label: String) throws {
        for attempt in 1...2 {
            let recorded = try #require(try record(on: server, frames: 19_200), "parec recorded nothing on \(label)")
            let measured = channelRMS(recorded, channels: channelNames.count)
            let expected = channelNames.indices.map { Double(ChannelTaggedTone.amplitude(ofChannel: $0)) / 2.squareRoot() }
            print("[\(label)] per-channel RMS \(measured.map { ($0 * 1000).rounded() / 1000 }) (expected \(expected.map { ($0 * 1000).rounded() / 1000 }))")
            let holds = zip(measured, expected).map { abs($0 / $1 - 1) < 0.05 }
            if attempt == 1, holds.contains(false) { continue }
            for (index, ok) in holds.enumerated() {
                #expect(ok, "\(label): channel \(channelNames[index]) at RMS \(measured[index]), expected \(expected[index])")
            }
            return
        }
    }
}
