import ArgumentParser
import Foundation
import SceneSoundClient
import SceneSoundDSP
import SceneSoundEngine
import SceneSoundProtocol
import SceneSoundSOFA

/// `scenesound hrtf compare A B`: one short sound at a sequence of directions, through A then B
/// at each. Each burst is rendered here, through the same engine as the server's, and played
/// bypassed (spatial off: bit-exact stereo), rather than by switching the server back and forth:
/// the server's set (and the choice it keeps across restarts) stays as it is, nothing else
/// playing on the desktop changes its sound, and each burst is exactly one set, with no
/// crossfade in it. The head is held still for the comparison.
struct HRTFCompareCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "compare",
        abstract: "Play a short sound at a sequence of directions, alternately through two HRTF sets.",
        discussion: """
            At each direction the sound plays through A, then through B; each line printed says \
            which set and direction plays ('A  +30°'; + is left). The bursts are rendered here \
            and played on the server with spatial off: the server's own set does not change.
            """)

    @Argument(help: ArgumentHelp("The first set: a SOFA file or a NAME from 'scenesound hrtf list'.", valueName: "A"))
    var first: String

    @Argument(help: ArgumentHelp("The second set.", valueName: "B"))
    var second: String

    @Option(name: .customLong("directions"), parsing: .unconditional,
            help: ArgumentHelp("Azimuths in degrees, comma-separated (+ = left).", valueName: "DEG,DEG,…"))
    var directions: String = "30,-30,90,-90,150,-150,0,180"

    @Option(name: .customLong("seconds"), parsing: .unconditional, help: ArgumentHelp("Each burst's length (0.05 to 5).", valueName: "S"))
    var seconds: Double = 0.4

    @Option(name: .customLong("distance"), parsing: .unconditional, help: ArgumentHelp("The source's distance (0.2 to 10).", valueName: "M"))
    var distanceMetres: Double = 1.5

    @OptionGroup var listening: ListeningSetOptions
    @OptionGroup var server: ServerOptions

    func validate() throws {
        _ = try azimuths()
        guard seconds.isFinite, (0.05...5).contains(seconds) else {
            throw ValidationError("--seconds \(seconds) is out of range (accepted: 0.05 to 5)")
        }
        guard distanceMetres.isFinite, (0.2...10).contains(distanceMetres) else {
            throw ValidationError("--distance \(distanceMetres) is out of range (accepted: 0.2 to 10 m)")
        }
    }

    func azimuths() throws -> [Double] {
        let values = directions.split(separator: ",").map { Double($0.trimmingCharacters(in: .whitespaces)) }
        guard !values.isEmpty, values.allSatisfy({ $0 != nil && $0!.isFinite }) else {
            throw ValidationError("--directions '\(directions)' is not a list of azimuths (accepted: degrees separated by commas, e.g. 30,-30,90)")
        }
        return values.map { $0! }
    }

    func run() throws {
        let paths = [try HRTFUseCommand.resolve(first), try HRTFUseCommand.resolve(second)]
        let connection = try server.connect()
        defer { connection.close() }
        let rateHz = Double(connection.server.sampleRateHz)
        let sets = try listening.load(paths, sampleRateHz: rateHz)
        var noise = WhiteNoise(seed: 7)
        let burst = BurstRenderer.fadedNoise(&noise, seconds: seconds, rateHz: rateHz)
        for azimuth in try azimuths() {
            for (label, set) in zip(["A", "B"], sets) {
                let rendered = BurstRenderer.render(burst, through: set, azimuthDegrees: azimuth,
                                                    distanceMetres: distanceMetres, rateHz: rateHz)
                BurstRenderer.say("\(label)  \(BurstRenderer.degrees(azimuth))")
                try BurstRenderer.play(rendered, rateHz: rateHz, on: connection)
            }
        }
    }
}

/// Short sounds rendered through a set here and played bypassed (`hrtf compare`, `hrtf test`).
/// How the sets that `hrtf compare` and `hrtf test` play are prepared: as the daemon prepares
/// its own (its `--hrtf-eq` and `--head-width-cm`), so that what is heard is what `hrtf use`
/// would give.
struct ListeningSetOptions: ParsableArguments {
    @Option(name: .customLong("hrtf-eq"), help: ArgumentHelp("As the daemon's --hrtf-eq: diffuse or none.", valueName: "diffuse|none"))
    var hrtfEqualization: HRTFEqualization = .diffuse

    @Option(name: .customLong("head-width-cm"), parsing: .unconditional,
            help: ArgumentHelp("As the daemon's --head-width-cm: the ITD scaled to this head (10 to 25).", valueName: "CM"))
    var headWidthCentimetres: Double?

    func validate() throws {
        if let width = headWidthCentimetres, !(width.isFinite && HRTFSet.headWidthRangeCentimetres.contains(width)) {
            throw ValidationError("--head-width-cm \(width) is out of range (accepted: 10 to 25 cm)")
        }
    }

    /// Each set, or a one-line error naming the file that is not one.
    func load(_ paths: [String], sampleRateHz: Double) throws -> [HRTFSet] {
        try paths.map { path in
            let set: HRTFSet
            do {
                set = try HRTFLoader().load(path: path, sampleRateHz: sampleRateHz, equalization: hrtfEqualization).set
            } catch {
                throw RuntimeError("\(path): \(error) (give an AES69 SOFA file)")
            }
            guard let width = headWidthCentimetres else { return set }
            return set.scalingInterauralDelays(by: HRTFSet.interauralDelayScale(headWidthCentimetres: width))
        }
    }
}

enum BurstRenderer {
    /// White noise with 10 ms raised-cosine fades.
    static func fadedNoise(_ noise: inout WhiteNoise, seconds: Double, rateHz: Double) -> [Float] {
        var samples = noise.samples(Int(seconds * rateHz), amplitude: 0.3)
        let fade = min(Int(0.01 * rateHz), samples.count / 2)
        for n in 0..<fade {
            let g = Float(0.5 - 0.5 * cos(Double.pi * Double(n) / Double(fade)))
            samples[n] *= g
            samples[samples.count - 1 - n] *= g
        }
        return samples
    }

    /// Interleaved stereo: `mono` at the direction (head still, no room), with its tail.
    static func render(_ mono: [Float], through set: HRTFSet, azimuthDegrees: Double, distanceMetres: Double,
                       rateHz: Double) -> [Float] {
        let configuration = EngineConfiguration(sampleRateHz: rateHz, room: .none)
        let renderer = SpatialRenderer(hrtf: set, configuration: configuration, maximumSources: 1,
                                       busFilters: AmbisonicDecoderCache().filters(for: set).filters)
        renderer.governor.simulatedLoadFraction = 0
        let position = SphericalPosition(azimuthDegrees: azimuthDegrees, distanceMetres: distanceMetres).cartesian
        renderer.add(RenderSource(input: BufferInput(channels: [mono]), channelCount: 1, mode: .anchored,
                                  channelPositions: [position], gain: 1, hrtf: set, maximumFrames: configuration.blockFrames))
        renderer.setHeadPose(.neutral, glide: false)
        let block = configuration.blockFrames
        var out: [Float] = [], buffer = [Float](repeating: 0, count: 2 * block)
        while out.count < 2 * (mono.count + renderer.tailFrames) {
            renderer.render(into: &buffer)
            out += buffer
        }
        return Array(out.dropFirst(2 * renderer.latencyFrames))
    }

    /// Plays interleaved stereo float on the server as it is (spatial off), until played.
    static func play(_ stereo: [Float], rateHz: Double, on connection: ClientConnection) throws {
        let format = AudioFormat(sampleFormat: .f32le, rateHz: UInt32(rateHz), channels: 2)
        try withClientErrors { () throws(ClientError) in
            let stream = try connection.openStream(StreamOpen(kind: .playback, format: format, spatialMode: .off, sceneID: ""))
            let bytes = stereo.withUnsafeBytes { Array($0) }
            try stream.write(bytes)
            try stream.drain()
            try stream.close()
        }
    }

    /// A line on stdout at once (a pipe would otherwise hold it until the end).
    static func say(_ line: String) {
        FileHandle.standardOutput.write(Data((line + "\n").utf8))
    }

    /// "+30°", "−90°", "0°".
    static func degrees(_ azimuth: Double) -> String {
        let rounded = Int(azimuth.rounded())
        return rounded > 0 ? "+\(rounded)°" : rounded < 0 ? "−\(-rounded)°" : "0°"
    }
}
