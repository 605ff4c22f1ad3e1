import Foundation
@testable import SceneSoundEngine
import SceneSoundProtocol
import SceneSoundPulse
@testable import SceneSoundServer
import SceneSoundTestSupport
import Testing

/// The devices' settings file and the server's following of the device (rendering, channels,
/// each device's spatial mode and EQ), in process: no sound server.
@Suite struct OutputDeviceSettingsTests {
    static func directory() throws -> String {
        let path = NSTemporaryDirectory() + "scenesound-devices-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    final class Lines: @unchecked Sendable {
        var lines: [String] = []
    }

    @Test func theStoreWritesWholeByRenameAndReadsBack() throws {
        let directory = try Self.directory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/state/devices.json"
        let log = Lines()
        let store = DeviceSettingsStore(filePath: path) { log.lines.append($0) }
        store.update(key: "hp", sinkName: "hp", description: "Phones") { $0.spatial = .fixed }
        let firstInode = try FileManager.default.attributesOfItem(atPath: path)[.systemFileNumber] as? UInt64
        store.update(key: "bluez:00:11", sinkName: "bt", description: nil) { $0.spatial = .headTracked; $0.headphoneEQPath = "" }
        let secondInode = try FileManager.default.attributesOfItem(atPath: path)[.systemFileNumber] as? UInt64
        // Renamed over, never rewritten in place: a reader sees the old file or the new one.
        #expect(firstInode != secondInode)
        #expect(!FileManager.default.fileExists(atPath: path + ".new"))
        let again = DeviceSettingsStore(filePath: path) { log.lines.append($0) }
        #expect(again.entries == store.entries)
        #expect(again.settings(for: "hp") == DeviceSettings(spatial: .fixed))
        #expect(again.settings(for: "bluez:00:11") == DeviceSettings(spatial: .headTracked, headphoneEQPath: ""))
        #expect(again.entries.first?.description == "Phones")
        #expect(log.lines.isEmpty, "\(log.lines)")
        // Nothing changed: nothing written.
        let before = try FileManager.default.attributesOfItem(atPath: path)[.systemFileNumber] as? UInt64
        again.update(key: "hp", sinkName: "hp", description: "Phones")
        #expect(try FileManager.default.attributesOfItem(atPath: path)[.systemFileNumber] as? UInt64 == before)
    }

    @Test func anUnreadableFileIsOneLoggedLineAndTheDefaults() throws {
        let directory = try Self.directory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/devices.json"
        try "{\"version\": 1, \"devices\": [ {\"key\": ".write(toFile: path, atomically: true, encoding: .utf8)
        let log = Lines()
        let store = DeviceSettingsStore(filePath: path) { log.lines.append($0) }
        #expect(store.entries.isEmpty)
        #expect(log.lines.count == 1, "\(log.lines)")
        #expect(log.lines.first?.hasPrefix("the devices' settings in \(path) could not be read (") == true, "\(log.lines)")
        // A directory where the file should be: unreadable too.
        let blocked = directory + "/blocked.json"
        try FileManager.default.createDirectory(atPath: blocked, withIntermediateDirectories: true)
        let other = Lines()
        _ = DeviceSettingsStore(filePath: blocked) { other.lines.append($0) }
        #expect(other.lines.count == 1, "\(other.lines)")
        // The next change replaces the broken file.
        store.update(key: "hp", sinkName: "hp", description: nil) { $0.spatial = .off }
        #expect(DeviceSettingsStore(filePath: path) { log.lines.append($0) }.settings(for: "hp") == DeviceSettings(spatial: .off))
        #expect(log.lines.count == 1)
    }

    @Test func deviceDefaultsParseAndNameWhatIsAccepted() throws {
        #expect(try DeviceSettings(parsingDefaults: "spatial=fixed") == DeviceSettings(spatial: .fixed))
        #expect(try DeviceSettings(parsingDefaults: "eq=none, hrtf=/a/b.sofa,spatial=head-tracked")
                == DeviceSettings(spatial: .headTracked, hrtfPath: "/a/b.sofa", headphoneEQPath: ""))
        #expect(try DeviceSettings(parsingDefaults: "") == DeviceSettings())
        for bad in ["spatial=sideways", "hrtf=relative.sofa", "colour=red", "spatial"] {
            #expect(throws: DeviceDefaultsError.self) { try DeviceSettings(parsingDefaults: bad) }
        }
        do { _ = try DeviceSettings(parsingDefaults: "spatial=x") } catch {
            #expect(error.description == "'spatial=x' is not valid (accepted: \(DeviceDefaultsError.accepted))")
        }
        #expect(DeviceSettings(spatial: .off).over(DeviceSettings(spatial: .fixed, headphoneEQPath: "")) == DeviceSettings(spatial: .off, headphoneEQPath: ""))
    }

    static let eq = "Preamp: -3.0 dB\nFilter 1: ON PK Fc 1000 Hz Gain 3.0 dB Q 1.41\n"

    /// The server's side: a device arriving changes the rendering (engine) and the output's
    /// channels; `spatial` and `eq use` are kept per device and come back with it.
    @Test func theRenderingAndEachDevicesSettingsFollowTheDevice() throws {
        let directory = try Self.directory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let eqPath = directory + "/ParametricEQ.txt"
        try Self.eq.write(toFile: eqPath, atomically: true, encoding: .utf8)
        let server = InProcessServer { $0.deviceSettingsPath = directory + "/devices.json" }
        let devices = server.core.outputDevices
        var channels: [Int] = []
        devices.useChannels = { channels.append($0.channelCount) }
        let client = try server.connect()

        #expect(try server.status().rendering == .init(method: "binaural", channels: 2, spatial: "head-tracked",
                                                       reason: "unknown sink: headphones", preference: "auto"))
        // With no device known a choice applies until one is.
        #expect(try client.request(.spatialUse(SpatialUse(spatial: .off))) == .ok)
        #expect(try server.status().rendering?.spatial == "off")
        let hp = OutputDevice(sinkName: "hp", description: "Phones", formFactor: "headphone")
        let s51 = OutputDevice(sinkName: "s51", formFactor: "speaker",
                               channels: ["front-left", "front-right", "front-center", "lfe", "rear-left", "rear-right"])
        devices.deviceChanged(hp)
        #expect(try client.request(.spatialUse(SpatialUse(spatial: .fixed))) == .ok)
        #expect(try client.request(.headphoneEQUse(HeadphoneEQUse(path: eqPath))) == .ok)
        server.render(blocks: 1)
        #expect(server.engine.rendering == OutputRendering(method: .binaural, spatial: .fixed))
        #expect(try server.status().headphoneEQ?.path == eqPath)

        devices.deviceChanged(s51)
        server.render(blocks: 1)
        #expect(server.engine.rendering == OutputRendering(method: .speakers(.surround51), spatial: .headTracked))
        #expect(channels == [6])
        var status = try server.status()
        #expect(status.rendering == .init(method: "speakers", speakerLayout: "5.1", channels: 6, spatial: "head-tracked",
                                          reason: "form factor speaker", preference: "auto"))
        #expect(status.outputDevice?.sink == "s51")
        #expect(status.headphoneEQ == nil)  // hp's EQ is hp's

        devices.deviceChanged(hp)
        server.render(blocks: 1)
        #expect(server.engine.rendering == OutputRendering(method: .binaural, spatial: .fixed))
        #expect(channels == [6, 2])
        status = try server.status()
        #expect(status.headphoneEQ?.path == eqPath)
        #expect(status.devices == [
            .init(key: "hp", sink: "hp", description: "Phones", playing: true, spatial: "fixed", headphoneEQ: eqPath),
            .init(key: "s51", sink: "s51", playing: false),
        ])
    }

    @Test func aWatchingClientIsToldOfEachChangeAndOnlyThen() throws {
        let server = InProcessServer()
        let watcher = try server.connect(), other = try server.connect()
        #expect(try watcher.request(.outputDeviceWatch) == .ok)
        func changes() throws -> [StatusDocument.OutputDeviceState] {
            try watcher.takeAll().compactMap { entry in
                guard case .outputDeviceChanged(let changed) = entry.message else { return nil }
                return try StatusDocument.jsonDecoder().decode(StatusDocument.OutputDeviceState.self, from: Data(changed.json.utf8))
            }
        }
        #expect(try changes().map(\.rendering.reason) == ["unknown sink: headphones"])  // the state now
        server.core.outputDevices.deviceChanged(OutputDevice(sinkName: "spk", formFactor: "speaker"))
        server.core.outputDevices.deviceChanged(OutputDevice(sinkName: "spk", formFactor: "speaker"))  // no change
        #expect(try changes().map { $0.outputDevice?.sink } == ["spk"])
        #expect(try other.request(.spatialUse(SpatialUse(spatial: .fixed))) == .ok)
        #expect(try changes().map(\.rendering.spatial) == ["fixed"])
        #expect(try other.takeAll().allSatisfy { if case .outputDeviceChanged = $0.message { false } else { true } })
    }

    @Test func deviceDefaultsAreWhatANewDeviceStartsWith() throws {
        let server = InProcessServer {
            $0.deviceDefaults = DeviceSettings(spatial: .off)
            $0.renderPreference = .speakers
        }
        server.core.outputDevices.deviceChanged(OutputDevice(sinkName: "hp", formFactor: "headphone"))
        server.render(blocks: 1)
        #expect(server.engine.rendering == OutputRendering(method: .speakers(.stereo), spatial: .off))
        #expect(try server.status().rendering?.reason == "--render speakers")
    }
}
