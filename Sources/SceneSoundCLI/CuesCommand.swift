import ArgumentParser
import Foundation
import SceneSoundDSP
import SceneSoundMedia

struct CuesCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "cues",
        abstract: "Measure the binaural cues of a stereo recording.",
        discussion: """
            ITD by cross-correlation of the two ears below 1.5 kHz (positive: the right ear \
            lags, the sound is on the left), ILD broadband (positive: the left ear is louder).
            """)

    @Argument(help: ArgumentHelp("A stereo audio file.", valueName: "FILE"))
    var path: String

    @Flag(help: "Print one JSON object.")
    var json = false

    @Option(parsing: .unconditional, help: ArgumentHelp("Measure successive segments of this length (silent ones are skipped).", valueName: "SECONDS"))
    var segment: Double?

    func validate() throws {
        if let segment, !(segment >= 0.05 && segment.isFinite) {
            throw ValidationError("--segment \(segment) is too short (accepted: 0.05 seconds or more)")
        }
    }

    func run() throws {
        let audio: DecodedAudio
        do { audio = try AudioFileReader.read(path: path) } catch let error as AudioFileError {
            throw RuntimeError(error.description)
        }
        guard audio.channelCount == 2 else { throw RuntimeError("\(path): needs 2 channels, has \(audio.channelCount)") }
        let left = audio.channel(0), right = audio.channel(1)
        if let segment {
            let length = Int(segment * audio.sampleRateHz)
            for start in stride(from: 0, to: left.count - length + 1, by: length) {
                let l = Array(left[start..<(start + length)]), r = Array(right[start..<(start + length)])
                guard (l + r).contains(where: { abs($0) > 0.001 }) else { continue }  // silence has no cues
                let cues = CueAnalysis.cues(left: l, right: r, sampleRateHz: audio.sampleRateHz)
                let t = Double(start) / audio.sampleRateHz
                if json {
                    print(#"{"start_seconds":\#(round1(t)),"itd_microseconds":\#(round1(cues.itdMicroseconds)),"ild_decibels":\#(round1(cues.interauralLevelDifferenceDecibels))}"#)
                } else {
                    print(String(format: "%6.2f s  ITD %7.1f µs  ILD %6.1f dB", t, cues.itdMicroseconds, cues.interauralLevelDifferenceDecibels))
                }
            }
            return
        }
        let cues = CueAnalysis.cues(left: left, right: right, sampleRateHz: audio.sampleRateHz)
        if json {
            print(#"{"itd_microseconds":\#(round1(cues.itdMicroseconds)),"ild_decibels":\#(round1(cues.interauralLevelDifferenceDecibels)),"seconds":\#(round1(audio.durationSeconds))}"#)
        } else {
            print("ITD \(round1(cues.itdMicroseconds)) µs, ILD \(round1(cues.interauralLevelDifferenceDecibels)) dB")
        }
    }

    private func round1(_ v: Double) -> Double { (v * 10).rounded() / 10 }
}
