// A user's program: depends on the SceneSound package's SceneSoundClient product alone and
// plays through each idiom on the default connection ($SCENESOUND_SOCKET). ConsumerPackageTests
// builds it in a package of its own and checks the daemon's mix. Usage: idiom-consumer FILE
import Foundation
import SceneSoundClient

let file = CommandLine.arguments[1]
// A pause between the idioms, so that the mix shows each one apart.
func leaveASilence() { usleep(200_000) }

do {
    try SceneSound.playSystemSound("bell", spatialExperience: .headTracked(.front))?.waitUntilFinished()
    print("system sound played")
    leaveASilence()
    try SceneSound.playAlertSound(file, spatialExperience: .fixed)?.waitUntilFinished()
    print("alert sound played")
    leaveASilence()

    let player = try SceneSoundPlayer(contentsOf: URL(fileURLWithPath: file))
    player.intendedSpatialExperience = .headTracked(.scene(identifier: "consumer"))
    try player.play()
    try player.waitUntilFinished()
    print("player played \(player.duration) s")
    leaveASilence()

    var phase = 0.0
    var framesLeft = 14400  // 0.3 s
    let tone = try SceneSoundSourceNode(sampleRateHz: 48000, channels: 1, spatialExperience: .bypassed) { frames, buffer in
        let count = min(frames, framesLeft)
        for frame in 0..<count {
            buffer[frame] = Float(sin(phase)) * 0.25
            phase += 2 * .pi * 440 / 48000
        }
        framesLeft -= count
        return count
    }
    try tone.start()
    try tone.waitUntilFinished()
    print("source node played")
} catch {
    FileHandle.standardError.write(Data("idiom-consumer: \(error)\n".utf8))
    exit(1)
}
