import Synchronization

/// The latest `capacity` records of one writer thread, each one word, read from any thread
/// without a lock: a record is stored in its slot before the count that publishes it. The
/// writer never allocates nor waits, so a render or server thread may keep one. A reader racing
/// the writer through a whole ring may read a slot already holding a newer record; the rare
/// events kept here (underflows, dry spells) never come that fast. Inlinable, so that a render
/// thread's call is specialised for its capacity, with no generic metadata to look up.
@frozen package struct LatestRecords<let capacity: Int>: ~Copyable, Sendable {
    @usableFromInline let slots: InlineArray<capacity, Atomic<UInt64>> = InlineArray { _ in Atomic(0) }
    @usableFromInline let written = Atomic<Int>(0)

    @inlinable package init() {}

    /// How many records it keeps.
    @inlinable package static var kept: Int { capacity }

    /// How many were ever recorded.
    @inlinable package var count: Int { written.load(ordering: .acquiring) }

    /// The writer's thread only.
    @inlinable package func record(_ word: UInt64) {
        let count = written.load(ordering: .relaxed)
        slots[count % capacity].store(word, ordering: .relaxed)
        written.store(count + 1, ordering: .releasing)
    }

    /// The latest records, newest first (allocates: a reader's call, never the writer's).
    @inlinable package var newestFirst: [UInt64] {
        let count = written.load(ordering: .acquiring)
        return (max(0, count - capacity) ..< count).reversed().map { slots[$0 % capacity].load(ordering: .relaxed) }
    }
}
