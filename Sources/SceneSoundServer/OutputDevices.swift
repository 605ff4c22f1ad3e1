import Foundation
import Logging
import NIOCore
import SceneSoundEngine
import SceneSoundProtocol
import SceneSoundPulse
import SceneSoundStatusJSON

extension OutputRendering.Spatial: Codable {}

/// The output device the mix plays on and what follows from it (docs/BEHAVIOUR.md "Output
/// devices"): the rendering (`RenderingChoice` from the sink and `--render`, with the spatial
/// mode the listener chose for the device), sent to the engine as `setRendering` and to the
/// output as `useChannels` when its channel count changes; and each device's remembered HRTF
/// set, headphone EQ and spatial mode (`DeviceSettingsStore`), switched in through
/// `HRTFSetting` and `HeadphoneEQSetting` as the device changes. A device's own choice wins,
/// then `--device-defaults`, then what the daemon started with. Event-loop confined.
final class OutputDevices {
    private let commands: EngineCommandQueue
    private let hrtf: HRTFSetting
    private let headphoneEQ: HeadphoneEQSetting
    let store: DeviceSettingsStore
    let preference: RenderPreference
    private let defaults: DeviceSettings
    private let logger: Logger
    /// The set and the EQ ("" none) the daemon started with: a device without a choice of
    /// its own, and no default, plays with them.
    private let startHRTFPath: String
    private let startHeadphoneEQPath: String
    /// The output's channels (`OutputBackend.useChannels`); set by `SoundServer`.
    var useChannels: (ChannelLayout) -> Void = { _ in }
    /// Told after the device or its rendering changed (the sessions that watch it are sent
    /// `OUTPUT_DEVICE_CHANGED`); set by `ServerCore`.
    var changed: () -> Void = {}
    /// Where a set still loading is tried again from; set by `SoundServer`.
    var eventLoop: EventLoop?
    private(set) var device: OutputDevice?
    private(set) var choice: RenderingChoice
    private(set) var rendering: OutputRendering
    private var channels = ChannelLayout.stereo
    private var retryScheduled = false

    init(commands: EngineCommandQueue, hrtf: HRTFSetting, headphoneEQ: HeadphoneEQSetting, store: DeviceSettingsStore,
         preference: RenderPreference, defaults: DeviceSettings, logger: Logger) {
        self.commands = commands
        self.hrtf = hrtf
        self.headphoneEQ = headphoneEQ
        self.store = store
        self.preference = preference
        self.defaults = defaults
        self.logger = logger
        startHRTFPath = hrtf.path
        startHeadphoneEQPath = headphoneEQ.inUse?.sourcePath ?? ""
        choice = RenderingChoice.choose(for: nil, preference: preference)
        rendering = OutputRendering(method: choice.method, spatial: defaults.spatial ?? .headTracked)
        if rendering != .headphones { commands.push(.setRendering(rendering)) }
    }

    /// Choices made while no device is known (a wav or null output, no sink): they apply until
    /// one is, and are not kept.
    private var withoutDevice = DeviceSettings()

    /// What the device playing now has chosen, over the defaults.
    private var settings: DeviceSettings {
        guard let device else { return withoutDevice.over(defaults) }
        return (store.settings(for: device.key) ?? DeviceSettings()).over(defaults)
    }

    /// The sink watch saw another device (nil: none known).
    func deviceChanged(_ device: OutputDevice?) {
        guard device != self.device else { return }
        self.device = device
        if let device {
            store.update(key: device.key, sinkName: device.sinkName, description: device.description)
        }
        apply()
    }

    /// `scenesound spatial`: for the device playing now, and remembered for it.
    func useSpatial(_ spatial: OutputRendering.Spatial) {
        remember { $0.spatial = spatial }
        apply()
    }

    /// `scenesound device render`: for the device playing now, and remembered for it (over `--render`).
    func useRender(_ render: RenderPreference) {
        remember { $0.render = render }
        apply()
    }

    /// `hrtf use` switched to `path`: remembered for the device playing now.
    func hrtfChosen(_ path: String) { remember { $0.hrtfPath = path } }

    /// `eq use` switched to `path` ("" none): remembered for the device playing now.
    func headphoneEQChosen(_ path: String) { remember { $0.headphoneEQPath = path } }

    private func remember(_ change: (inout DeviceSettings) -> Void) {
        guard let device else { return change(&withoutDevice) }
        store.update(key: device.key, sinkName: device.sinkName, description: device.description, change)
    }

    private func apply() {
        let before = (deviceStatus, renderingStatus)
        defer { if before != (deviceStatus, renderingStatus) { changed() } }
        let settings = settings
        choice = RenderingChoice.choose(for: device, preference: settings.render ?? preference)
        if let render = settings.render, render != .auto {
            choice.reason = "chosen for the device: \(render.rawValue)"
        }
        let now = OutputRendering(method: choice.method, spatial: settings.spatial ?? .headTracked)
        if now != rendering {
            logger.info("output device \(device.map { $0.key } ?? "unknown"): \(now) (\(choice.reason))")
            rendering = now
            commands.push(.setRendering(now))
            commands.workArrived()
        }
        let layout = now.channels
        if layout.channelCount != channels.channelCount {
            channels = layout
            useChannels(layout)
        }
        let eqPath = settings.headphoneEQPath ?? startHeadphoneEQPath
        if eqPath != (headphoneEQ.inUse?.sourcePath ?? "") {
            do {
                try headphoneEQ.use(path: eqPath)
                logger.info("headphone EQ for \(device?.key ?? "the device"): \(eqPath.isEmpty ? "none" : eqPath)")
            } catch {
                logger.warning("headphone EQ for \(device?.key ?? "the device"): \(error.detail); the EQ in use stays")
            }
        }
        switchHRTF(to: settings.hrtfPath ?? startHRTFPath)
    }

    private func switchHRTF(to path: String) {
        guard path != hrtf.path, let eventLoop else { return }
        do {
            try hrtf.use(path: path, on: eventLoop, keepAsDefault: false) { [logger, device] result in
                if case .failure(let error) = result {
                    logger.warning("HRTF set for \(device?.key ?? "the device"): \(error.detail); the set in use stays")
                } else {
                    logger.info("HRTF set for \(device?.key ?? "the device"): \(path)")
                }
            }
        } catch where error.code == .limitExceeded {
            // Another set is loading: once it is in, this device's set follows.
            guard !retryScheduled else { return }
            retryScheduled = true
            let devices = NIOLoopBound(self, eventLoop: eventLoop)
            eventLoop.scheduleTask(in: .milliseconds(200)) {
                let devices = devices.value
                devices.retryScheduled = false
                devices.switchHRTF(to: devices.settings.hrtfPath ?? devices.startHRTFPath)
            }
        } catch {
            logger.warning("HRTF set for \(device?.key ?? "the device"): \(error.detail); the set in use stays")
        }
    }

    // MARK: Status

    var deviceStatus: StatusDocument.OutputDevice? {
        device.map { device in
            StatusDocument.OutputDevice(
                key: device.key, sink: device.sinkName, description: device.description, formFactor: device.formFactor,
                bus: device.bus, port: device.port?.name, portDescription: device.port?.description, portType: device.port?.type,
                bluetoothProfile: device.bluetoothProfile, bluetoothAddress: device.bluetoothAddress, channels: device.channels)
        }
    }

    var renderingStatus: StatusDocument.Rendering {
        let method: String, layout: String?
        switch rendering.method {
        case .binaural: (method, layout) = ("binaural", nil)
        case .speakers(let speakers): (method, layout) = ("speakers", speakers.rawValue)
        }
        return StatusDocument.Rendering(method: method, speakerLayout: layout, channels: rendering.channelCount,
                                        spatial: rendering.spatial.rawValue, reason: choice.reason,
                                        preference: (settings.render ?? preference).rawValue)
    }

    /// `OUTPUT_DEVICE_CHANGED`'s payload, now.
    var changedEvent: OutputDeviceChanged {
        OutputDeviceChanged(json: StatusDocument.jsonLine(StatusDocument.OutputDeviceState(outputDevice: deviceStatus,
                                                                                          rendering: renderingStatus)))
    }

    var devicesStatus: [StatusDocument.Device] {
        store.entries.map { entry in
            StatusDocument.Device(key: entry.key, sink: entry.sinkName, description: entry.description,
                                  playing: entry.key == device?.key, spatial: entry.settings.spatial?.rawValue,
                                  hrtf: entry.settings.hrtfPath,
                                  headphoneEQ: entry.settings.headphoneEQPath.map { $0.isEmpty ? "none" : $0 },
                                  render: entry.settings.render?.rawValue)
        }
    }
}
