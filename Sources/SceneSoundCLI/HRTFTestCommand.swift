import ArgumentParser
import Foundation
import SceneSoundClient
import SceneSoundDSP
import SceneSoundSOFA

/// `scenesound hrtf test [SET…]`: a guided, blind listening test. Short noise bursts from
/// random horizontal directions (`--seed`), through each candidate set in a shuffled order
/// (rendered here and played bypassed, as `hrtf compare` does); the listener answers each with
/// an azimuth. Per set: front/back confusions (the answer nearer the front/back mirror of the
/// direction than the direction itself) and the mean lateral error (the error left/right, which
/// a front/back confusion does not change). Offers the best set (fewest confusions, then the
/// smallest lateral error) and, on 'y', switches the server to it as `hrtf use` does.
struct HRTFTestCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "test",
        abstract: "A guided listening test: which HRTF set lets you tell where sounds come from?",
        discussion: """
            Each trial plays a short burst; answer where it came from as an azimuth in degrees: \
            0 ahead, 90 left, -90 right, 180 behind (e.g. 30, -120). The sets are not named while \
            you listen. At the end a table gives each set's front/back confusions and mean lateral \
            error, and offers to use the best. --plan prints the trials (set and direction) \
            instead, for scripts.
            """)

    @Argument(help: ArgumentHelp("Candidate sets: SOFA files or NAMEs (default: every set 'scenesound hrtf list' finds).",
                                 valueName: "SET"))
    var sets: [String] = []

    @Option(name: .customLong("seed"), parsing: .unconditional, help: ArgumentHelp("Seed of the random directions and order.", valueName: "N"))
    var seed: UInt64 = UInt64(Date().timeIntervalSince1970)

    @Option(name: .customLong("trials"), parsing: .unconditional, help: ArgumentHelp("Bursts per set (1 to 100).", valueName: "N"))
    var trialsPerSet: Int = 12

    @Option(name: .customLong("seconds"), parsing: .unconditional, help: ArgumentHelp("Each burst's length (0.05 to 2).", valueName: "S"))
    var seconds: Double = 0.3

    @Flag(name: .customLong("plan"), help: "Print the trials (set, azimuth) as lines and exit: nothing plays.")
    var plan = false

    @OptionGroup var listening: ListeningSetOptions
    @OptionGroup var server: ServerOptions

    /// Horizontal directions, the interaural axis left out (there front and back coincide).
    static let azimuths: [Double] = [0, 30, 60, 120, 150, 180, -30, -60, -120, -150]
    static let answerFormat = "an azimuth in degrees from -180 to 180: 0 ahead, 90 left, -90 right, 180 behind (e.g. 30, -120)"

    func validate() throws {
        guard (1...100).contains(trialsPerSet) else {
            throw ValidationError("--trials \(trialsPerSet) is out of range (accepted: 1 to 100)")
        }
        guard seconds.isFinite, (0.05...2).contains(seconds) else {
            throw ValidationError("--seconds \(seconds) is out of range (accepted: 0.05 to 2)")
        }
    }

    struct Trial: Equatable {
        var set: Int
        var azimuthDegrees: Double
    }

    /// The trials for `setCount` sets: each set `trialsPerSet` directions, all shuffled.
    static func trials(setCount: Int, trialsPerSet: Int, seed: UInt64) -> [Trial] {
        var random = SplitMix64(seed: seed)
        var trials: [Trial] = []
        for set in 0..<setCount {
            for _ in 0..<trialsPerSet { trials.append(Trial(set: set, azimuthDegrees: azimuths[random.next(below: azimuths.count)])) }
        }
        for i in stride(from: trials.count - 1, to: 0, by: -1) { trials.swapAt(i, random.next(below: i + 1)) }
        return trials
    }

    func run() throws {
        let paths = try candidatePaths()
        let trials = Self.trials(setCount: paths.count, trialsPerSet: trialsPerSet, seed: seed)
        if plan {
            for trial in trials { print("\(paths[trial.set]) \(Int(trial.azimuthDegrees))") }
            return
        }
        let connection = try server.connect()
        defer { connection.close() }
        let rateHz = Double(connection.server.sampleRateHz)
        let loaded = try listening.load(paths, sampleRateHz: rateHz)
        var noise = WhiteNoise(seed: seed | 1)
        var scores = paths.map { _ in Score() }
        BurstRenderer.say("\(trials.count) bursts from \(paths.count) HRTF sets, in random order. After each, type where it came from: \(Self.answerFormat).")
        trialLoop: for (number, trial) in trials.enumerated() {
            let burst = BurstRenderer.fadedNoise(&noise, seconds: seconds, rateHz: rateHz)
            let rendered = BurstRenderer.render(burst, through: loaded[trial.set], azimuthDegrees: trial.azimuthDegrees,
                                                distanceMetres: 1.5, rateHz: rateHz)
            try BurstRenderer.play(rendered, rateHz: rateHz, on: connection)
            switch Self.ask("\(number + 1)/\(trials.count): where did it come from? ") {
            case .endOfInput:
                BurstRenderer.say("\nno more answers: stopped after \(number) of \(trials.count)")
                break trialLoop
            case .unusable:
                BurstRenderer.say("not scored")
            case .azimuth(let answer):
                scores[trial.set].add(truth: trial.azimuthDegrees, answer: answer)
            }
        }
        BurstRenderer.say(Self.table(paths: paths, scores: scores))
        guard let best = Self.best(scores) else { return }
        BurstRenderer.say("Use \(paths[best])? [y/n] ")
        guard let reply = readLine(strippingNewline: true)?.trimmingCharacters(in: .whitespaces).lowercased(),
              reply == "y" || reply == "yes" else { return }
        try withClientErrors { () throws(ClientError) in try connection.useHRTF(path: paths[best]) }
        BurstRenderer.say("HRTF set: \(paths[best])")
    }

    private func candidatePaths() throws -> [String] {
        if !sets.isEmpty { return try sets.map { try HRTFUseCommand.resolve($0) } }
        let found = HRTFCatalog().entries().filter { $0.problem == nil }.map(\.path)
        guard !found.isEmpty else { throw RuntimeError("no HRTF sets found (see 'scenesound hrtf list'); name the sets to test") }
        return found
    }

    enum Answer: Equatable { case azimuth(Double), unusable, endOfInput }

    /// One answer; a bad one is asked again once, with the accepted format.
    static func ask(_ prompt: String) -> Answer {
        BurstRenderer.say(prompt)
        for attempt in 0..<2 {
            guard let line = readLine(strippingNewline: true) else { return .endOfInput }
            if let azimuth = parse(line) { return .azimuth(azimuth) }
            if attempt == 0 { BurstRenderer.say("'\(line)' is not an answer: give \(answerFormat). Again: ") }
        }
        return .unusable
    }

    static func parse(_ text: String) -> Double? {
        var trimmed = text.trimmingCharacters(in: .whitespaces)
        if trimmed.hasSuffix("°") { trimmed.removeLast() }
        trimmed = trimmed.replacingOccurrences(of: "−", with: "-")
        guard let value = Double(trimmed), value.isFinite, (-180...180).contains(value) else { return nil }
        return value
    }

    struct Score {
        var trials = 0
        var confusions = 0
        var lateralErrorSumDegrees = 0.0
        var meanLateralErrorDegrees: Double { trials == 0 ? 0 : lateralErrorSumDegrees / Double(trials) }

        mutating func add(truth: Double, answer: Double) {
            trials += 1
            if HRTFTestCommand.isFrontBackConfusion(truth: truth, answer: answer) { confusions += 1 }
            lateralErrorSumDegrees += abs(HRTFTestCommand.lateralDegrees(answer) - HRTFTestCommand.lateralDegrees(truth))
        }
    }

    /// The angle from the median plane (−90 … 90, + left): the same for a direction and its
    /// front/back mirror.
    static func lateralDegrees(_ azimuth: Double) -> Double { asin(sin(azimuth * .pi / 180)) * 180 / .pi }

    static func angleBetween(_ a: Double, _ b: Double) -> Double {
        let d = abs((a - b).truncatingRemainder(dividingBy: 360))
        return d > 180 ? 360 - d : d
    }

    /// The answer is nearer the direction's front/back mirror (180° − azimuth) than the direction.
    static func isFrontBackConfusion(truth: Double, answer: Double) -> Bool {
        angleBetween(answer, 180 - truth) < angleBetween(answer, truth)
    }

    /// Fewest confusions, then the smallest lateral error; nil when nothing was scored.
    static func best(_ scores: [Score]) -> Int? {
        scores.indices.filter { scores[$0].trials > 0 }.min { a, b in
            (scores[a].confusions, scores[a].meanLateralErrorDegrees) < (scores[b].confusions, scores[b].meanLateralErrorDegrees)
        }
    }

    static func table(paths: [String], scores: [Score]) -> String {
        var rows = [["SET", "TRIALS", "FRONT/BACK", "LATERAL ERROR"]]
        for (path, score) in zip(paths, scores) {
            rows.append([path, "\(score.trials)", "\(score.confusions)", String(format: "%.1f°", score.meanLateralErrorDegrees)])
        }
        let widths = (0..<4).map { column in rows.map { $0[column].count }.max() ?? 0 }
        return rows.map { row in
            row.enumerated().map { column, cell in
                column == 3 ? cell : cell.padding(toLength: widths[column], withPad: " ", startingAt: 0)
            }.joined(separator: "  ")
        }.joined(separator: "\n")
    }
}

/// A seeded generator (SplitMix64): the same trials for the same seed everywhere.
struct SplitMix64 {
    private var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
    mutating func next(below bound: Int) -> Int { Int(next() % UInt64(bound)) }
}
