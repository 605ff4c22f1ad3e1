/// Keeps the capture sink's volume and mute and the real sink's the same, whichever of the two
/// changes. While capturing, ours is the default sink, so the desktop's volume keys and slider
/// act on it; the real sink is what is heard. A change on ours is forwarded to the real sink
/// and ours keeps it (the slider stays where the user put it; the recordings do not depend on
/// it, see `OnsetRecovery.mixGainDidChange`); a change on the real sink (another program) is
/// shown on ours. Each write comes back as a change event on the sink written to: a reported
/// value that is one this mirror wrote is its echo, not a change, so nothing loops.
///
/// Volumes are compared in the capture sink's channel order; `remap` converts. Pure logic,
/// confined to the capture's mainloop thread.
struct VolumeMirror {
    struct Setting: Equatable {
        var channelVolumes: [UInt32]
        var isMuted: Bool
    }

    /// One value (the volume, or the mute) kept the same on both sinks.
    struct Channel<Value: Equatable>: Equatable {
        private(set) var agreed: Value?
        private var writtenToCapture: [Value] = []
        private var writtenToReal: [Value] = []
        /// Ours has shown the agreed value since the real sink spoke.
        private var captureInStep = false

        /// Ours reported `value`: what to write to the real sink, nil if nothing.
        mutating func captureReported(_ value: Value) -> Value? {
            // Until the real sink has spoken, ours may hold a stale setting (restored by the
            // server from an earlier session); until it shows the real sink's, what it reports
            // is still its own start: a sink PipeWire has just made reports every channel at
            // volume 0 until its properties arrive, and forwarded, that silenced the real sink
            // (2 daemon starts in ~100 under load). Neither is a user's change.
            guard agreed != nil else { return nil }
            guard captureInStep else {
                captureShows(value)
                return nil
            }
            return Self.report(value, agreed: &agreed, echoes: &writtenToCapture, writes: &writtenToReal)
        }

        /// Ours shows `value`, in its own report or beside the real sink's (a write of the
        /// value it already has may bring no report of its own).
        mutating func captureShows(_ value: Value) {
            guard !captureInStep, agreed != nil, value == agreed else { return }
            captureInStep = true
            writtenToCapture.removeAll()  // any echo still to come is of this value
        }

        /// The real sink reported `value`: what to write to ours, nil if nothing.
        mutating func realReported(_ value: Value) -> Value? {
            Self.report(value, agreed: &agreed, echoes: &writtenToReal, writes: &writtenToCapture)
        }

        private static func report(_ value: Value, agreed: inout Value?, echoes: inout [Value], writes: inout [Value]) -> Value? {
            if let echo = echoes.firstIndex(of: value) {
                echoes.removeSubrange(...echo)  // the earlier ones were overtaken
                return nil
            }
            guard value != agreed else { return nil }
            agreed = value
            writes.append(value)
            if writes.count > 8 { writes.removeFirst(writes.count - 8) }
            return value
        }
    }

    private(set) var volume = Channel<[UInt32]>()
    private(set) var mute = Channel<Bool>()

    /// The real sink is another one now (the user chose a device): its setting is shown on ours.
    mutating func realSinkChanged() {
        volume = Channel()
        mute = Channel()
    }

    /// Ours reported `setting`: what to write to the real sink (in our channel order).
    mutating func captureReported(_ setting: Setting) -> (channelVolumes: [UInt32]?, isMuted: Bool?) {
        (volume.captureReported(setting.channelVolumes), mute.captureReported(setting.isMuted))
    }

    /// Ours shows `setting`, read beside the real sink's report.
    mutating func captureShows(_ setting: Setting) {
        volume.captureShows(setting.channelVolumes)
        mute.captureShows(setting.isMuted)
    }

    /// The real sink reported `setting` (in our channel order): what to write to ours.
    mutating func realReported(_ setting: Setting) -> (channelVolumes: [UInt32]?, isMuted: Bool?) {
        (volume.realReported(setting.channelVolumes), mute.realReported(setting.isMuted))
    }

    /// `volumes` in the positions `from`, expressed in the positions `to`: each channel takes
    /// the volume of the same position, or the loudest when the source has no such channel.
    static func remap(_ volumes: [UInt32], from: [Int32], to: [Int32]) -> [UInt32] {
        let loudest = volumes.max() ?? 0
        return to.map { position in from.firstIndex(of: position).map { volumes[$0] } ?? loudest }
    }
}
