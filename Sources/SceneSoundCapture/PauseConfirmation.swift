/// Whether a stream pipewire-pulse reports as corked is really paused.
///
/// pipewire-pulse (0.3.65) reports a sink input as corked whenever its node is not RUNNING
/// (`info->state != PW_NODE_STATE_RUNNING`), not when its app corked it: a stream not linked
/// yet, or being relinked after a move, reads corked too while its audio is about to flow
/// (with 32 apps starting, the capture rested under them once). A pause is believed once the
/// stream is still reported corked a look later and its recording got no frame in between:
/// the recordings are passive, so a paused app's node, inactive, takes them out of the graph,
/// while a node that runs, whatever it is reported as, hands its recording every quantum.
/// Confined to the capture's thread.
struct PauseConfirmation {
    /// How long a stream must stay silent and corked to count as paused.
    static let lookSeconds = 0.25

    /// Streams with a look on its way, and the frames their recording had when it started
    /// (nil: no recording yet).
    private var looking: [UInt32: Int?] = [:]
    /// Streams found paused, until they are reported playing or end.
    private var paused: Set<UInt32> = []

    func isPaused(_ index: UInt32) -> Bool { paused.contains(index) }

    /// A stream reported corked and not known paused: true if a look must be scheduled now
    /// (none on its way), `framesRecorded` being its recording's count so far.
    mutating func startLooking(_ index: UInt32, framesRecorded: Int?) -> Bool {
        guard !paused.contains(index), looking[index] == nil else { return false }
        looking[index] = .some(framesRecorded)
        return true
    }

    /// The look, a moment later: paused if still reported corked and the recording got
    /// nothing since (or there is still none). Returns whether it is paused now.
    @discardableResult
    mutating func looked(_ index: UInt32, stillCorked: Bool, framesRecorded: Int?) -> Bool {
        guard let before = looking.removeValue(forKey: index) else { return paused.contains(index) }
        if stillCorked, before == framesRecorded { paused.insert(index) }
        return paused.contains(index)
    }

    /// Reported playing, gone from our sink, or ended.
    mutating func forget(_ index: UInt32) {
        looking[index] = nil
        paused.remove(index)
    }
}
