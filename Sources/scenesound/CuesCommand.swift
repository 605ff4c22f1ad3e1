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

    func run() throws {
        let audio: DecodedAudio
        do { audio = try AudioFileReader.read(path: path) } catch let error as AudioFileError {
            throw RuntimeError(error.description)
        }
        guard audio.channelCount == 2 else { throw RuntimeError("\(path): needs 2 channels, has \(audio.channelCount)") }
        let cues = CueAnalysis.cues(left: audio.channel(0), right: audio.channel(1), sampleRateHz: audio.sampleRateHz)
        if json {
            print(#"{"itd_microseconds":\#(round1(cues.itdMicroseconds)),"ild_decibels":\#(round1(cues.interauralLevelDifferenceDecibels)),"seconds":\#(round1(audio.durationSeconds))}"#)
        } else {
            print("ITD \(round1(cues.itdMicroseconds)) µs, ILD \(round1(cues.interauralLevelDifferenceDecibels)) dB")
        }
    }

    private func round1(_ v: Double) -> Double { (v * 10).rounded() / 10 }
}
