import CPulse

/// libpulse's introspection calls with Swift closures for their callbacks. Each closure is
/// retained until its last callback. libpulse drops pending callbacks without calling them
/// when the connection dies; then the closure leaks, once per request in flight at that
/// moment, which is bounded and rare (the connection is thrown away with it).
struct PulseRequests {
    let context: OpaquePointer

    private final class Box<Value> {
        let body: Value
        init(_ body: Value) { self.body = body }
    }

    private static func retain<Value>(_ body: Value) -> UnsafeMutableRawPointer {
        Unmanaged.passRetained(Box(body)).toOpaque()
    }

    private static func take<Value>(_ userdata: UnsafeMutableRawPointer?, as _: Value.Type) -> Value {
        Unmanaged<Box<Value>>.fromOpaque(userdata!).takeRetainedValue().body
    }

    private static func peek<Value>(_ userdata: UnsafeMutableRawPointer?, as _: Value.Type) -> Value {
        Unmanaged<Box<Value>>.fromOpaque(userdata!).takeUnretainedValue().body
    }

    /// Releases the operation handle; a nil one means the request was refused at once, so its
    /// closure is released and called with the failure.
    private static func started(_ operation: OpaquePointer?, _ userdata: UnsafeMutableRawPointer, onRefusal: () -> Void) {
        if let operation {
            pa_operation_unref(operation)
        } else {
            Unmanaged<AnyObject>.fromOpaque(userdata).release()
            onRefusal()
        }
    }

    typealias Completion = (Bool) -> Void

    /// The default sink's name (nil if the server has none or the request failed).
    func defaultSinkName(_ done: @escaping (String?) -> Void) {
        let userdata = Self.retain(done)
        let operation = pa_context_get_server_info(context, { _, info, userdata in
            let done = PulseRequests.take(userdata, as: ((String?) -> Void).self)
            done(info?.pointee.default_sink_name.map { String(cString: $0) })
        }, userdata)
        Self.started(operation, userdata) { done(nil) }
    }

    /// The server's name ("pulseaudio", or "PulseAudio (on PipeWire 0.3.65)"); nil if the
    /// request failed.
    func serverName(_ done: @escaping (String?) -> Void) {
        let userdata = Self.retain(done)
        let operation = pa_context_get_server_info(context, { _, info, userdata in
            let done = PulseRequests.take(userdata, as: ((String?) -> Void).self)
            done(info?.pointee.server_name.map { String(cString: $0) })
        }, userdata)
        Self.started(operation, userdata) { done(nil) }
    }

    /// Every sink; nil if the request failed.
    func sinks(_ done: @escaping ([SinkFacts]?) -> Void) {
        final class Collector { var sinks: [SinkFacts] = []; let done: ([SinkFacts]?) -> Void; init(_ d: @escaping ([SinkFacts]?) -> Void) { done = d } }
        let collector = Collector(done)
        let userdata = Self.retain(collector)
        let operation = pa_context_get_sink_info_list(context, { _, info, eol, userdata in
            if let info, eol == 0 {
                PulseRequests.peek(userdata, as: Collector.self).sinks.append(SinkFacts(info.pointee))
                return
            }
            let collector = PulseRequests.take(userdata, as: Collector.self)
            collector.done(eol < 0 ? nil : collector.sinks)
        }, userdata)
        Self.started(operation, userdata) { done(nil) }
    }

    /// One sink by name; nil if there is none.
    func sink(named name: String, _ done: @escaping (SinkFacts?) -> Void) {
        final class Collector { var sink: SinkFacts?; let done: (SinkFacts?) -> Void; init(_ d: @escaping (SinkFacts?) -> Void) { done = d } }
        let userdata = Self.retain(Collector(done))
        let operation = name.withCString { pa_context_get_sink_info_by_name(context, $0, { _, info, eol, userdata in
            if let info, eol == 0 {
                PulseRequests.peek(userdata, as: Collector.self).sink = SinkFacts(info.pointee)
                return
            }
            let collector = PulseRequests.take(userdata, as: Collector.self)
            collector.done(collector.sink)
        }, userdata) }
        Self.started(operation, userdata) { done(nil) }
    }

    /// Every sink input; nil if the request failed.
    func sinkInputs(_ done: @escaping ([SinkInputFacts]?) -> Void) {
        final class Collector { var inputs: [SinkInputFacts] = []; let done: ([SinkInputFacts]?) -> Void; init(_ d: @escaping ([SinkInputFacts]?) -> Void) { done = d } }
        let userdata = Self.retain(Collector(done))
        let operation = pa_context_get_sink_input_info_list(context, { _, info, eol, userdata in
            if let info, eol == 0 {
                PulseRequests.peek(userdata, as: Collector.self).inputs.append(SinkInputFacts(info.pointee))
                return
            }
            let collector = PulseRequests.take(userdata, as: Collector.self)
            collector.done(eol < 0 ? nil : collector.inputs)
        }, userdata)
        Self.started(operation, userdata) { done(nil) }
    }

    /// One sink input; nil if it no longer exists.
    func sinkInput(_ index: UInt32, _ done: @escaping (SinkInputFacts?) -> Void) {
        final class Collector { var input: SinkInputFacts?; let done: (SinkInputFacts?) -> Void; init(_ d: @escaping (SinkInputFacts?) -> Void) { done = d } }
        let userdata = Self.retain(Collector(done))
        let operation = pa_context_get_sink_input_info(context, index, { _, info, eol, userdata in
            if let info, eol == 0 {
                PulseRequests.peek(userdata, as: Collector.self).input = SinkInputFacts(info.pointee)
                return
            }
            let collector = PulseRequests.take(userdata, as: Collector.self)
            collector.done(collector.input)
        }, userdata)
        Self.started(operation, userdata) { done(nil) }
    }

    private static let successCallback: pa_context_success_cb_t = { _, success, userdata in
        PulseRequests.take(userdata, as: Completion.self)(success != 0)
    }

    func moveSinkInput(_ index: UInt32, toSink sinkIndex: UInt32, _ done: @escaping Completion) {
        let userdata = Self.retain(done)
        let operation = pa_context_move_sink_input_by_index(context, index, sinkIndex, Self.successCallback, userdata)
        Self.started(operation, userdata) { done(false) }
    }

    func setDefaultSink(_ name: String, _ done: @escaping Completion) {
        let userdata = Self.retain(done)
        let operation = name.withCString { pa_context_set_default_sink(context, $0, Self.successCallback, userdata) }
        Self.started(operation, userdata) { done(false) }
    }

    /// Sets a sink's volume per channel (`PA_VOLUME_NORM` is 0 dB), in the sink's channel order.
    func setSinkVolume(_ index: UInt32, channelVolumes: [UInt32], _ done: @escaping Completion) {
        var volume = pa_cvolume()
        volume.channels = UInt8(min(channelVolumes.count, Int(PA_CHANNELS_MAX)))
        withUnsafeMutableBytes(of: &volume.values) { raw in
            for (channel, value) in channelVolumes.prefix(Int(volume.channels)).enumerated() {
                raw.storeBytes(of: value, toByteOffset: channel * 4, as: UInt32.self)
            }
        }
        let userdata = Self.retain(done)
        let operation = pa_context_set_sink_volume_by_index(context, index, &volume, Self.successCallback, userdata)
        Self.started(operation, userdata) { done(false) }
    }

    func setSinkMute(_ index: UInt32, isMuted: Bool, _ done: @escaping Completion) {
        let userdata = Self.retain(done)
        let operation = pa_context_set_sink_mute_by_index(context, index, isMuted ? 1 : 0, Self.successCallback, userdata)
        Self.started(operation, userdata) { done(false) }
    }

    func unloadModule(_ index: UInt32, _ done: @escaping Completion) {
        let userdata = Self.retain(done)
        let operation = pa_context_unload_module(context, index, Self.successCallback, userdata)
        Self.started(operation, userdata) { done(false) }
    }

    /// The new module's index, nil if it failed to load.
    func loadModule(_ name: String, arguments: String, _ done: @escaping (UInt32?) -> Void) {
        let userdata = Self.retain(done)
        let operation = name.withCString { name in
            arguments.withCString { arguments in
                pa_context_load_module(context, name, arguments, { _, index, userdata in
                    PulseRequests.take(userdata, as: ((UInt32?) -> Void).self)(index == UInt32.max ? nil : index)
                }, userdata)
            }
        }
        Self.started(operation, userdata) { done(nil) }
    }
}

/// Runs `count` requests started by `start` and calls `done` once all have answered.
final class CompletionCounter {
    private var remaining: Int
    private let done: () -> Void

    init(count: Int, done: @escaping () -> Void) {
        remaining = count
        self.done = done
        if count == 0 { done() }
    }

    func finishOne() {
        remaining -= 1
        if remaining == 0 { done() }
    }
}
