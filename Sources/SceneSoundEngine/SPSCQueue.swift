import Synchronization

/// A bounded single-producer, single-consumer queue of values: the command queue into the
/// render thread and the event queue out of it. Slots are allocated once; push and pop never
/// allocate, lock or wait. (A value that owns a class reference is moved, not copied, so
/// releasing it happens wherever the consumer lets it go.)
public final class SPSCQueue<Element>: @unchecked Sendable {
    public let capacity: Int
    private let slots: UnsafeMutablePointer<Element?>
    private let head = Atomic<Int>(0)   // next to pop
    private let tail = Atomic<Int>(0)   // next to push

    public init(capacity: Int) {
        precondition(capacity > 0)
        self.capacity = capacity
        slots = .allocate(capacity: capacity)
        slots.initialize(repeating: nil, count: capacity)
    }

    deinit {
        slots.deinitialize(count: capacity)
        slots.deallocate()
    }

    /// Producer side. False when full (the caller decides: retry later, or count a drop).
    @discardableResult
    public func push(_ element: Element) -> Bool {
        let t = tail.load(ordering: .relaxed)
        guard t - head.load(ordering: .acquiring) < capacity else { return false }
        slots[t % capacity] = element
        tail.store(t + 1, ordering: .releasing)
        return true
    }

    /// Producer side: whether a push now succeeds (only the producer fills the queue, so the
    /// room seen here is still there when it pushes).
    public var hasRoom: Bool { tail.load(ordering: .relaxed) - head.load(ordering: .acquiring) < capacity }

    /// Consumer side.
    public func pop() -> Element? {
        let h = head.load(ordering: .relaxed)
        guard h < tail.load(ordering: .acquiring) else { return nil }
        let element = slots[h % capacity].take()
        head.store(h + 1, ordering: .releasing)
        return element
    }

    public var count: Int { tail.load(ordering: .acquiring) - head.load(ordering: .acquiring) }
}
