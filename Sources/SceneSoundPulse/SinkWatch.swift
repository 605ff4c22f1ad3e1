import CPulse

/// Follows the sink SceneSound plays on — the server's default sink, or the one it is pinned
/// to — over a libpulse connection of its own (PulseAudio, and PipeWire through pipewire-pulse,
/// which reports the same keys), subscribed to sink and server events: a jack switching the
/// active port, the default sink changing, a Bluetooth sink arriving or leaving. Each change of
/// what it sees goes to `onChange` (nil: no such sink, or none is the default), on libpulse's
/// mainloop thread; nothing is reported while nothing changes. Reconnects after a second when
/// the server goes away (what it saw last stands meanwhile). Idle, it waits on its socket alone.
public final class SinkWatch: @unchecked Sendable {  // its state is touched under the mainloop's lock
    private let mainloop: PulseMainloop
    private let serverAddress: String?
    private let onChange: @Sendable (OutputDevice?) -> Void
    private var context: OpaquePointer?
    /// nil: the default sink.
    private var pinnedSink: String?
    private var reported: OutputDevice??
    /// A look is on its way; `stale`: something happened since it started, look again.
    private var looking = false
    private var stale = false
    private var reconnectTimer: OpaquePointer?
    private var stopped = false
    /// A sink with this property is no output device (our capture sink, the default while the
    /// capture runs): seeing it changes nothing.
    private let ignoredSinkProperty: String?

    /// Starts watching the default sink (`pinnedSink` nil) or the named one.
    public init(serverAddress: String?, pinnedSink: String? = nil, ignoredSinkProperty: String? = nil,
                threadName: String = "sink-watch",
                onChange: @escaping @Sendable (OutputDevice?) -> Void) throws(PulseOutputError) {
        mainloop = try PulseMainloop(threadName: threadName)
        self.serverAddress = serverAddress
        self.pinnedSink = pinnedSink
        self.ignoredSinkProperty = ignoredSinkProperty
        self.onChange = onChange
        try mainloop.start()
        mainloop.withLock { connect() }
    }

    deinit { stop() }

    /// Watches `sinkName` from now on (nil: whichever sink is the default).
    public func follow(sinkName: String?) {
        mainloop.withLock {
            guard sinkName != pinnedSink else { return }
            pinnedSink = sinkName
            look()
        }
    }

    public func stop() {
        let wasStopped = mainloop.withLock { () -> Bool in
            defer { stopped = true }
            guard !stopped else { return true }
            if let reconnectTimer { mainloop.cancelTimer(reconnectTimer) }
            reconnectTimer = nil
            dropContext()
            return false
        }
        if !wasStopped, !mainloop.isCurrentThread { mainloop.stopAndJoin() }
    }

    private var userdata: UnsafeMutableRawPointer { Unmanaged.passUnretained(self).toOpaque() }
    private static func from(_ userdata: UnsafeMutableRawPointer?) -> SinkWatch {
        Unmanaged<SinkWatch>.fromOpaque(userdata!).takeUnretainedValue()
    }

    private func connect() {
        guard !stopped, let context = pa_context_new(mainloop.api, "SceneSound (output device)") else { return }
        self.context = context
        pa_context_set_state_callback(context, { context, userdata in
            SinkWatch.from(userdata).stateChanged(context!)
        }, userdata)
        pa_context_set_subscribe_callback(context, { _, _, _, userdata in
            SinkWatch.from(userdata).look()
        }, userdata)
        if pulseConnect(context, serverAddress: serverAddress) < 0 { scheduleReconnect() }
    }

    private func dropContext() {
        guard let context else { return }
        pa_context_set_state_callback(context, nil, nil)
        pa_context_set_subscribe_callback(context, nil, nil)
        pulseDisconnect(context)
        pa_context_unref(context)
        self.context = nil
        looking = false
        stale = false
    }

    private func stateChanged(_ context: OpaquePointer) {
        guard context == self.context else { return }
        switch pa_context_get_state(context) {
        case PA_CONTEXT_READY:
            let mask = pa_subscription_mask_t(PA_SUBSCRIPTION_MASK_SINK.rawValue | PA_SUBSCRIPTION_MASK_SERVER.rawValue
                                              | PA_SUBSCRIPTION_MASK_CARD.rawValue)
            if let operation = pa_context_subscribe(context, mask, nil, nil) { pa_operation_unref(operation) }
            look()
        case PA_CONTEXT_FAILED, PA_CONTEXT_TERMINATED:
            scheduleReconnect()
        default:
            break
        }
    }

    /// In a libpulse callback: the context must not be freed under it, so later.
    private func scheduleReconnect() {
        guard !stopped, reconnectTimer == nil else { return }
        mainloop.runSoon { [self] in dropContext() }
        reconnectTimer = mainloop.scheduleTimer(afterSeconds: 1, userdata: userdata) { api, event, _, userdata in
            let watch = SinkWatch.from(userdata)
            api!.pointee.time_free(event)  // a fired timer stays until freed
            watch.reconnectTimer = nil
            watch.connect()
        }
    }

    // MARK: Looking at the sink

    /// Asks for the sink again; one look at a time, another after it when events came meanwhile.
    private func look() {
        guard let context, pa_context_get_state(context) == PA_CONTEXT_READY else { return }
        if looking { stale = true; return }
        looking = true
        stale = false
        if let pinnedSink {
            lookUp(sinkName: pinnedSink)
        } else {
            let operation = pa_context_get_server_info(context, { _, info, userdata in
                let watch = SinkWatch.from(userdata)
                guard let name = info?.pointee.default_sink_name.map({ String(cString: $0) }), !name.isEmpty else {
                    return watch.saw(nil)
                }
                watch.lookUp(sinkName: name)
            }, userdata)
            if let operation { pa_operation_unref(operation) } else { looking = false }
        }
    }

    private func lookUp(sinkName: String) {
        guard let context else { return }
        let operation = pa_context_get_sink_info_by_name(context, sinkName, { _, info, eol, userdata in
            let watch = SinkWatch.from(userdata)
            if let info {
                let device = OutputDevice(info.pointee)
                if let ignored = watch.ignoredSinkProperty, pa_proplist_contains(info.pointee.proplist, ignored) == 1 {
                    watch.foundIgnored = true
                } else {
                    watch.found = device
                }
            } else if watch.foundIgnored {  // nothing to report
                watch.foundIgnored = false
                watch.looking = false
                if watch.stale { watch.look() }
            } else {  // end of the list (eol 1), or no such sink (eol -1)
                watch.saw(eol > 0 ? watch.found : nil)
                watch.found = nil
            }
        }, userdata)
        if let operation { pa_operation_unref(operation) } else { looking = false }
    }

    private var found: OutputDevice?
    private var foundIgnored = false

    private func saw(_ device: OutputDevice?) {
        looking = false
        if reported == nil || reported! != device {
            reported = .some(device)
            onChange(device)
        }
        if stale { look() }
    }
}

extension OutputDevice {
    init(_ info: pa_sink_info) {
        var properties: [String: String] = [:]
        var state: UnsafeMutableRawPointer?
        while let proplist = info.proplist, let key = pa_proplist_iterate(proplist, &state) {
            if let value = pa_proplist_gets(proplist, key) { properties[String(cString: key)] = String(cString: value) }
        }
        var port: Port?
        if let active = info.active_port?.pointee, let name = active.name {
            port = Port(name: String(cString: name), description: active.description.map { String(cString: $0) },
                        type: OutputDevice.portTypeName(active.type))
        }
        var map = info.channel_map
        let positions = withUnsafeBytes(of: &map.map) { Array($0.bindMemory(to: pa_channel_position_t.self).prefix(Int(map.channels))) }
        let channels = positions.map { pa_channel_position_to_string($0).map { String(cString: $0) } ?? "?" }
        self.init(sinkName: info.name.map { String(cString: $0) } ?? "", properties: properties, port: port, channels: channels)
    }
}
