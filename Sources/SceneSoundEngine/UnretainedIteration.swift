// The render thread's loops over its sources and streams, without reference counting: at
// 1024 sources a retain and a release per element and loop (atomic operations) cost more
// than some of the work done for the element. Only for loops whose body does not add to or
// remove from the collection (the array keeps every element alive while the loop runs).

extension ContiguousArray where Element: AnyObject {
    /// Calls `body` with each element, in order, lent rather than retained.
    @inline(__always)
    func forEachUnretained(_ body: (Element) throws -> Void) rethrows {
        try withUnsafeBufferPointer { buffer in
            var index = 0
            while index < buffer.count {
                try Unmanaged.passUnretained(buffer[index])._withUnsafeGuaranteedRef(body)
                index &+= 1
            }
        }
    }

    /// Calls `body` with each element and its index, in order, lent rather than retained.
    @inline(__always)
    func forEachUnretained(_ body: (Int, Element) throws -> Void) rethrows {
        try withUnsafeBufferPointer { buffer in
            var index = 0
            while index < buffer.count {
                try Unmanaged.passUnretained(buffer[index])._withUnsafeGuaranteedRef { try body(index, $0) }
                index &+= 1
            }
        }
    }

    /// Calls `body` with the element at `index`, lent rather than retained.
    @inline(__always)
    func withUnretained<Result>(at index: Int, _ body: (Element) throws -> Result) rethrows -> Result {
        try withUnsafeBufferPointer { try Unmanaged.passUnretained($0[index])._withUnsafeGuaranteedRef(body) }
    }

    /// Whether any element satisfies `predicate`, each lent rather than retained.
    @inline(__always)
    func containsUnretained(where predicate: (Element) -> Bool) -> Bool {
        withUnsafeBufferPointer { buffer in
            var index = 0
            while index < buffer.count {
                if Unmanaged.passUnretained(buffer[index])._withUnsafeGuaranteedRef(predicate) { return true }
                index &+= 1
            }
            return false
        }
    }
}
