/// A one-byte choice on the wire that the CLI, the daemon's flags and the status document name
/// in words (`yaw-only`, `head-tracked`, `opentrack`): the word for each case, and the case for
/// a word.
public protocol NamedChoice: CaseIterable, RawRepresentable, Sendable where RawValue == UInt8 {
    var name: String { get }
}

extension NamedChoice {
    /// The case named so; nil for any other word.
    public init?(name: String) {
        guard let value = Self.allCases.first(where: { $0.name == name }) else { return nil }
        self = value
    }
}
