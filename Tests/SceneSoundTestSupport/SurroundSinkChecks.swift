import Testing

extension SurroundSink {
    /// Records the sink and checks each of its six channels carries `ChannelTaggedTone`'s level
    /// for that channel (within 5 %): the output's channel c reached the sink's channel c. Taken
    /// again as `MachineStallWatch.checkRecording` says (a fresh-clone run on 1 Dec 2026 had every
    /// channel 8 % low in two takes on a host stealing several per cent of the CPUs).
    public static func expectChannelsLandInPlace(on server: PrivateSoundServer, label: String) throws {
        try MachineStallWatch.checkRecording(label) {
            let recorded = try #require(try record(on: server, frames: 19_200), "parec recorded nothing on \(label)")
            let measured = channelRMS(recorded, channels: channelNames.count)
            let expected = channelNames.indices.map { Double(ChannelTaggedTone.amplitude(ofChannel: $0)) / 2.squareRoot() }
            print("[\(label)] per-channel RMS \(measured.map { ($0 * 1000).rounded() / 1000 }) (expected \(expected.map { ($0 * 1000).rounded() / 1000 }))")
            return channelNames.indices.map { index in
                (abs(measured[index] / expected[index] - 1) < 0.05,
                 "\(label): channel \(channelNames[index]) at RMS \(measured[index]), expected \(expected[index])")
            }
        }
    }
}
