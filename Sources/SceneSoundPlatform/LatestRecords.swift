import Synchronization

/// The latest records of one writer thread (up to `capacity`), each one word, read from any
/// thread without a lock: a record is stored in its slot before the count that publishes it.
/// The writer never allocates, locks nor waits, so a render or server thread may keep one. A
/// reader racing the writer through a whole ring may read a slot already holding a newer record;
/// the rare events kept here (underflows, dry spells) never come that fast. Not generic over its
/// size: a generic one was called unspecialised from the render thread, through type metadata.
@frozen package struct LatestRecords: ~Copyable, Sendable {
    /// The most a ring keeps.
    package static let capacity = 16
    @usableFromInline let slots: InlineArray<16, Atomic<UInt64>> = InlineArray { _ in Atomic(0) }
    @usableFromInline let written = Atomic<Int>(0)
    /// How many records it keeps.
    package let kept: Int

    @inlinable package init(keeping kept: Int = LatestRecords.capacity) {
        precondition((1 ... Self.capacity).contains(kept), "LatestRecords keeps 1 to \(Self.capacity) records")
        self.kept = kept
    }

    /// How many were ever recorded.
    @inlinable package var count: Int { written.load(ordering: .acquiring) }

    /// The writer's thread only.
    @inlinable package func record(_ word: UInt64) {
        let count = written.load(ordering: .relaxed)
        slots[count % kept].store(word, ordering: .relaxed)
        written.store(count + 1, ordering: .releasing)
    }

    /// The latest records, newest first (allocates: a reader's call, never the writer's).
    @inlinable package var newestFirst: [UInt64] {
        let count = written.load(ordering: .acquiring)
        return (max(0, count - kept) ..< count).reversed().map { slots[$0 % kept].load(ordering: .relaxed) }
    }
}
