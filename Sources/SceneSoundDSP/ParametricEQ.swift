// A headphone equalization as AutoEQ writes it (`ParametricEQ.txt`, EqualizerAPO's syntax):
//
//     Preamp: -6.2 dB
//     Filter 1: ON LSC Fc 105 Hz Gain 5.2 dB Q 0.70
//     Filter 2: ON PK Fc 2500 Hz Gain -3.0 dB Q 1.41
//     Filter 3: OFF HSC Fc 10000 Hz Gain 2.0 dB Q 0.70
//
// Parsed without Foundation (this module has none), strictly: any line that is not one of
// these, a blank line or a `#` comment is refused with its line number and what was expected,
// so a file that half-loaded can never colour what the listener hears.

/// The filters of a ParametricEQ.txt, in file order (OFF filters left out).
public struct ParametricEQ: Equatable, Sendable {
    public struct Filter: Equatable, Sendable {
        public var shape: BiquadCoefficients.Shape
        public var frequencyHz: Double
        public var gainDecibels: Double
        public var q: Double

        public init(shape: BiquadCoefficients.Shape, frequencyHz: Double, gainDecibels: Double, q: Double) {
            self.shape = shape
            self.frequencyHz = frequencyHz
            self.gainDecibels = gainDecibels
            self.q = q
        }
    }

    public var preampDecibels: Double
    public var filters: [Filter]

    public init(preampDecibels: Double = 0, filters: [Filter]) {
        self.preampDecibels = preampDecibels
        self.filters = filters
    }

    /// What the file may hold (refused beyond, naming the line).
    public static let frequencyRangeHz = 10.0...22000.0
    public static let gainRangeDecibels = -30.0...30.0
    public static let qRange = 0.05...20.0
    public static let preampRangeDecibels = -60.0...30.0
    public static let maximumFilters = 32

    /// The shapes by their file names.
    static let shapeNames: [(name: String, shape: BiquadCoefficients.Shape)] = [
        ("PK", .peaking), ("LSC", .lowShelf), ("HSC", .highShelf),
    ]
    static let filterSyntax = "'Filter N: ON|OFF PK|LSC|HSC Fc F Hz Gain G dB Q Q'"

    /// Parses the file's text. Errors name the line and what it should have been.
    public init(parsing text: String) throws(ParametricEQError) {
        var preamp: Double?
        var filters: [Filter] = []
        var lineNumber = 0
        // "\r\n" is one Character in Swift, a newline like "\n": Windows files split the same.
        for line in text.split(omittingEmptySubsequences: false, whereSeparator: { $0.isNewline }) {
            lineNumber += 1
            let words = line.split(whereSeparator: { $0 == " " || $0 == "\t" }).map(String.init)
            guard let first = words.first, !first.hasPrefix("#") else { continue }
            func fail(_ what: String) -> ParametricEQError { ParametricEQError(line: lineNumber, message: what) }
            if first == "Preamp:" {
                guard preamp == nil else { throw fail("a second Preamp line (one is allowed)") }
                guard words.count == 3, words[2] == "dB", let value = Double(words[1]), value.isFinite else {
                    throw fail("expected 'Preamp: G dB', found '\(line)'")
                }
                guard Self.preampRangeDecibels.contains(value) else {
                    throw fail("Preamp \(words[1]) dB is out of range (accepted: -60 to 30 dB)")
                }
                preamp = value
            } else if first == "Filter" || first == "Filter:" {
                // "Filter 1:", "Filter:" (EqualizerAPO allows the number to be left out).
                var rest = words.dropFirst()
                if first == "Filter" {
                    guard let number = rest.first, number.hasSuffix(":"), Int(number.dropLast()) != nil else {
                        throw fail("expected \(Self.filterSyntax), found '\(line)'")
                    }
                    rest = rest.dropFirst()
                }
                let fields = Array(rest)
                guard fields.count == 10, fields[2] == "Fc", fields[4] == "Hz", fields[5] == "Gain", fields[7] == "dB",
                      fields[8] == "Q" else {
                    throw fail("expected \(Self.filterSyntax), found '\(line)'")
                }
                guard fields[0] == "ON" || fields[0] == "OFF" else {
                    throw fail("'\(fields[0])' is not ON or OFF (expected \(Self.filterSyntax))")
                }
                guard let shape = Self.shapeNames.first(where: { $0.name == fields[1] })?.shape else {
                    throw fail("filter type '\(fields[1])' is not supported (accepted: PK, LSC, HSC)")
                }
                func number(_ text: String, _ name: String, _ range: ClosedRange<Double>, _ unit: String) throws(ParametricEQError) -> Double {
                    guard let value = Double(text), value.isFinite else {
                        throw fail("\(name) '\(text)' is not a number (expected \(Self.filterSyntax))")
                    }
                    guard range.contains(value) else {
                        throw fail("\(name) \(text)\(unit) is out of range (accepted: \(range.lowerBound) to \(range.upperBound)\(unit))")
                    }
                    return value
                }
                let frequency = try number(fields[3], "Fc", Self.frequencyRangeHz, " Hz")
                let gain = try number(fields[6], "Gain", Self.gainRangeDecibels, " dB")
                let q = try number(fields[9], "Q", Self.qRange, "")
                guard fields[0] == "ON" else { continue }
                guard filters.count < Self.maximumFilters else {
                    throw fail("more than \(Self.maximumFilters) filters")
                }
                filters.append(Filter(shape: shape, frequencyHz: frequency, gainDecibels: gain, q: q))
            } else {
                throw fail("expected 'Preamp: G dB' or \(Self.filterSyntax), found '\(line)'")
            }
        }
        self.init(preampDecibels: preamp ?? 0, filters: filters)
    }

    /// The sections at a rate. A filter whose frequency the rate cannot carry (at or above
    /// 0.49 × the rate) is refused, not bent.
    public func coefficients(sampleRateHz: Double) throws(ParametricEQError) -> [BiquadCoefficients] {
        var sections: [BiquadCoefficients] = []
        for (i, filter) in filters.enumerated() {
            guard filter.frequencyHz < 0.49 * sampleRateHz else {
                throw ParametricEQError(line: nil, message: "filter \(i + 1): Fc \(filter.frequencyHz) Hz is above what \(Int(sampleRateHz)) Hz audio carries (accepted: below \(0.49 * sampleRateHz) Hz)")
            }
            sections.append(BiquadCoefficients(filter.shape, frequencyHz: filter.frequencyHz,
                                               gainDecibels: filter.gainDecibels, q: filter.q, sampleRateHz: sampleRateHz))
        }
        return sections
    }
}

public struct ParametricEQError: Error, Equatable, CustomStringConvertible {
    /// 1-based; nil for a problem of the whole file.
    public var line: Int?
    public var message: String

    public init(line: Int?, message: String) {
        self.line = line
        self.message = message
    }

    public var description: String { line.map { "line \($0): \(message)" } ?? message }
}
