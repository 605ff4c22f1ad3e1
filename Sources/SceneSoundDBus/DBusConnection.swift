import CSystemd
import Glibc
import SceneSoundPlatform

/// A method call received on an exported object.
public struct DBusMethodCall: Sendable {
    /// The caller's unique name (`:1.42`).
    public var sender: String
    public var path: String
    public var member: String
    public var arguments: [DBusValue]
}

/// A signal received through a match.
public struct DBusSignal: Sendable {
    public var sender: String?
    public var path: String
    public var interface: String
    public var member: String
    public var arguments: [DBusValue]
}

/// A method of an exported object: its argument types (checked before `handler` runs: a call
/// with others is refused with InvalidArgs) and what it returns.
public struct DBusMethod: Sendable {
    public var name: String
    public var inputSignature: String
    public var outputSignature: String
    public var handler: @Sendable (DBusMethodCall) -> Result<[DBusValue], DBusError>

    public init(name: String, inputSignature: String, outputSignature: String = "",
                handler: @escaping @Sendable (DBusMethodCall) -> Result<[DBusValue], DBusError>) {
        self.name = name
        self.inputSignature = inputSignature
        self.outputSignature = outputSignature
        self.handler = handler
    }
}

/// A match, exported object or name watch registered on a connection, until `cancel()` or the
/// connection's end.
public final class DBusSubscription: @unchecked Sendable {
    fileprivate weak var connection: DBusConnection?
    fileprivate var slot: OpaquePointer?  // guarded by the connection's lock
    fileprivate let handler: MessageHandler

    fileprivate init(connection: DBusConnection, handler: MessageHandler) {
        self.connection = connection
        self.handler = handler
    }

    public func cancel() {
        connection?.cancel(self)
    }
}

/// One connection to a message bus through sd-bus, with one thread of its own that dispatches
/// what arrives (signals, calls to exported objects) to their handlers. Idle, that thread is
/// blocked in poll() on the bus's socket and a wake descriptor: no timers.
///
/// Any thread may call `call` and register handlers; handlers run on the connection's thread,
/// one at a time, and may themselves call (sd-bus is single-threaded, so the bus is used under
/// one recursive lock; a synchronous call blocks the dispatching of others until its reply).
public final class DBusConnection: @unchecked Sendable {
    /// The name of every connection's thread (at most 15 bytes: the kernel's limit).
    public static let threadName = "scenesound-dbus"
    /// The bus's name for this connection (`:1.42`): what peers call back.
    public let uniqueName: String
    private let lock = RecursiveLock()
    private var bus: OpaquePointer?  // sd_bus*, guarded by `lock`; nil once closed
    private var subscriptions: [ObjectIdentifier: DBusSubscription] = [:]  // guarded by `lock`
    private var wakeDescriptor: Int32  // written in init only
    private var stopping = false  // guarded by `lock`
    private var thread: PlatformThread?  // set once in init
    private let onDisconnected: (@Sendable (DBusError) -> Void)?

    /// The session bus of `environment` (`DBUS_SESSION_BUS_ADDRESS`).
    public static func sessionBus(environment: [String: String],
                                  onDisconnected: (@Sendable (DBusError) -> Void)? = nil) throws(DBusError) -> DBusConnection {
        guard let address = environment["DBUS_SESSION_BUS_ADDRESS"], !address.isEmpty else {
            throw .failed("DBUS_SESSION_BUS_ADDRESS is not set: no session bus")
        }
        return try DBusConnection(address: address, onDisconnected: onDisconnected)
    }

    /// Connects and says Hello to the bus at `address` (`unix:path=…`), then starts the thread.
    /// `onDisconnected` runs on that thread when the bus goes away (not after `close()`).
    public init(address: String, onDisconnected: (@Sendable (DBusError) -> Void)? = nil) throws(DBusError) {
        self.onDisconnected = onDisconnected
        var newBus: OpaquePointer?
        var result = sd_bus_new(&newBus)
        guard result >= 0, let newBus else { throw DBusError(errno: -result, doing: "sd_bus_new") }
        func fail(_ what: String) -> DBusError {
            sd_bus_flush_close_unref(newBus)
            return DBusError(errno: -result, doing: what)
        }
        result = sd_bus_set_address(newBus, address)
        if result < 0 { throw fail("bus address \(address)") }
        result = sd_bus_set_bus_client(newBus, 1)
        if result < 0 { throw fail("sd_bus_set_bus_client") }
        result = sd_bus_start(newBus)
        if result < 0 { throw fail("connecting to \(address)") }
        var unique: UnsafePointer<CChar>?
        result = sd_bus_get_unique_name(newBus, &unique)  // waits for Hello's reply
        if result < 0 { throw fail("Hello on \(address)") }
        uniqueName = String(cString: unique!)
        bus = newBus
        wakeDescriptor = scenesound_wake_eventfd()
        guard wakeDescriptor >= 0 else {
            sd_bus_flush_close_unref(newBus)
            throw DBusError(errno: errno, doing: "eventfd")
        }
        do {
            thread = try PlatformThread { [self] in run() }
        } catch {
            sd_bus_flush_close_unref(newBus)
            Glibc.close(wakeDescriptor)
            wakeDescriptor = -1  // deinit runs all the same: nothing to close twice
            throw DBusError(errno: error.errorNumber, doing: "starting the D-Bus thread")
        }
    }

    deinit {
        if wakeDescriptor >= 0 { Glibc.close(wakeDescriptor) }
    }

    /// Stops the thread, drops every handler and closes the connection. Idempotent; from a
    /// handler too (the thread then finishes on its own).
    public func close() {
        let alreadyStopping = lock.withLock {
            defer { stopping = true }
            return stopping
        }
        wake()
        if !alreadyStopping { thread?.joinOrDetach() }
    }

    public var isOpen: Bool { lock.withLock { bus != nil && !stopping } }

    // MARK: Calls

    /// Calls a method and waits for its reply (at most `timeoutSeconds`); the reply's values,
    /// or the error the peer (or sd-bus) answered.
    public func call(destination: String, path: String, interface: String, member: String,
                     arguments: [DBusValue] = [], timeoutSeconds: Double = 5) throws(DBusError) -> [DBusValue] {
        defer { wake() }  // messages read while waiting for the reply are queued: dispatch them
        return try withBus { bus throws(DBusError) in
            var message: OpaquePointer?
            var result = sd_bus_message_new_method_call(bus, &message, destination, path, interface, member)
            guard result >= 0, let message else { throw DBusError(errno: -result, doing: "calling \(interface).\(member)") }
            defer { sd_bus_message_unref(message) }
            try DBusMessageCoding.append(arguments, to: message)
            var error = sd_bus_error()
            defer { sd_bus_error_free(&error) }
            var reply: OpaquePointer?
            result = sd_bus_call(bus, message, UInt64(max(timeoutSeconds, 0.001) * 1e6), &error, &reply)
            defer { if let reply { sd_bus_message_unref(reply) } }
            guard result >= 0, let reply else {
                throw DBusError(error, result: result, doing: "\(destination) \(path) \(interface).\(member)")
            }
            return try DBusMessageCoding.readAll(reply)
        }
    }

    /// The unique name owning `name` now, nil when none does.
    public func nameOwner(_ name: String) throws(DBusError) -> String? {
        do {
            return try call(destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus",
                            member: "GetNameOwner", arguments: [.string(name)]).first?.string
        } catch where error.name == DBusError.nameHasNoOwnerName {
            return nil
        }
    }

    /// Asks the bus for a well-known name (not queued, not replacing an owner); whether it got it.
    @discardableResult
    public func requestName(_ name: String) throws(DBusError) -> Bool {
        let reply = try call(destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus",
                             member: "RequestName", arguments: [.string(name), .uint32(4)])  // DBUS_NAME_FLAG_DO_NOT_QUEUE
        return reply.first?.integer == 1 || reply.first?.integer == 4  // primary owner, or already the owner
    }

    public func releaseName(_ name: String) throws(DBusError) {
        _ = try call(destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus",
                     member: "ReleaseName", arguments: [.string(name)])
    }

    // MARK: Signals and owners

    /// Runs `handler` on the connection's thread for each signal matching all the given fields
    /// (nil: any). `arg0` matches the first argument (a name, for NameOwnerChanged).
    public func addSignalMatch(sender: String? = nil, path: String? = nil, interface: String? = nil, member: String? = nil,
                               arg0: String? = nil, handler: @escaping @Sendable (DBusSignal) -> Void) throws(DBusError) -> DBusSubscription {
        var rule = ["type='signal'"]
        for (key, value) in [("sender", sender), ("path", path), ("interface", interface), ("member", member), ("arg0", arg0)] {
            if let value { rule.append("\(key)='\(value)'") }
        }
        let matchRule = rule.joined(separator: ",")
        return try register(DBusSubscription(connection: self, handler: .signal(handler)), doing: "adding the match \(matchRule)") {
            sd_bus_add_match($0, &$1, matchRule, dispatchMessage, $2)
        }
    }

    /// Follows who owns `name` (NameOwnerChanged): `handler` runs at once with the owner now
    /// (nil: nobody), then on the connection's thread at every change, e.g. a compositor
    /// restarting. The last call always tells the current owner.
    public func watchNameOwner(_ name: String, handler: @escaping @Sendable (String?) -> Void) throws(DBusError) -> DBusSubscription {
        // The match first, then the query: a change in between is reported after the query's
        // answer, and the last report is the newest.
        let subscription = try addSignalMatch(sender: "org.freedesktop.DBus", path: "/org/freedesktop/DBus",
                                              interface: "org.freedesktop.DBus", member: "NameOwnerChanged", arg0: name) { signal in
            guard signal.arguments.count == 3, let owner = signal.arguments[2].string else { return }
            handler(owner.isEmpty ? nil : owner)
        }
        do {
            // Under the lock the connection's thread dispatches with: a change that arrives
            // during the query is handed on after this answer, never before it.
            try lock.withLock { () throws(DBusError) in handler(try nameOwner(name)) }
        } catch {
            subscription.cancel()
            throw error
        }
        return subscription
    }

    // MARK: Exported objects

    /// Exports an object at `path` whose methods (interface `interface`) answer only the caller
    /// `allowedCaller` names at the time of the call (a unique name; nil: nobody): any other
    /// caller gets AccessDenied, so no other client can change anything through it.
    /// `org.freedesktop.DBus.Introspectable` answers anyone.
    public func exportObject(path: String, interface: String, methods: [DBusMethod],
                             allowedCaller: @escaping @Sendable () -> String?) throws(DBusError) -> DBusSubscription {
        let object = ExportedObject(interface: interface, methods: methods, allowedCaller: allowedCaller)
        return try register(DBusSubscription(connection: self, handler: .object(object)), doing: "exporting \(path)") {
            sd_bus_add_object($0, &$1, path, dispatchMessage, $2)
        }
    }

    // MARK: Internals

    /// Adds `subscription`'s slot to the bus with `add` (bus, slot, userdata; sd-bus's result)
    /// and keeps it until cancelled; the connection's thread is woken to take it into account.
    private func register(_ subscription: DBusSubscription, doing action: String,
                          _ add: (OpaquePointer, inout OpaquePointer?, UnsafeMutableRawPointer?) -> Int32) throws(DBusError) -> DBusSubscription {
        try withBus { bus throws(DBusError) in
            let result = add(bus, &subscription.slot, subscription.context)
            if result < 0 { throw DBusError(errno: -result, doing: action) }
            subscriptions[ObjectIdentifier(subscription)] = subscription
        }
        wake()
        return subscription
    }

    fileprivate func cancel(_ subscription: DBusSubscription) {
        lock.withLock {
            guard subscriptions.removeValue(forKey: ObjectIdentifier(subscription)) != nil else { return }
            if let slot = subscription.slot { sd_bus_slot_unref(slot) }
            subscription.slot = nil
        }
    }

    private func withBus<Result>(_ body: (OpaquePointer) throws(DBusError) -> Result) throws(DBusError) -> Result {
        lock.lock()
        defer { lock.unlock() }
        guard let bus, !stopping else { throw DBusError(name: "org.freedesktop.DBus.Error.Disconnected", message: "the D-Bus connection is closed") }
        return try body(bus)
    }

    private func wake() {
        var one: UInt64 = 1
        _ = write(wakeDescriptor, &one, 8)
    }

    /// The connection's thread: dispatch everything queued, then sleep in poll() until the bus's
    /// socket (or the wake descriptor) says there is more, or sd-bus's own deadline (a pending
    /// call's timeout; none when idle).
    private func run() {
        // Named, so that a test (or a user's top -H) can find it and count its wake-ups.
        _ = scenesound_name_this_thread(DBusConnection.threadName)
        var disconnection: DBusError?
        while true {
            lock.lock()
            guard !stopping, let bus else {
                lock.unlock()
                break
            }
            var result: Int32 = 0
            repeat { result = sd_bus_process(bus, nil) } while result > 0 && !stopping
            if result < 0 {
                disconnection = DBusError(errno: -result, doing: "the D-Bus connection")
                lock.unlock()
                break
            }
            let descriptor = sd_bus_get_fd(bus)
            let events = sd_bus_get_events(bus)
            var deadlineMicroseconds: UInt64 = .max
            sd_bus_get_timeout(bus, &deadlineMicroseconds)
            lock.unlock()

            var timeoutMilliseconds: Int32 = -1
            if deadlineMicroseconds != .max {
                var now = timespec()
                clock_gettime(CLOCK_MONOTONIC, &now)
                let nowMicroseconds = UInt64(now.tv_sec) * 1_000_000 + UInt64(now.tv_nsec) / 1000
                let remaining = deadlineMicroseconds > nowMicroseconds ? deadlineMicroseconds - nowMicroseconds : 0
                timeoutMilliseconds = Int32(min((remaining + 999) / 1000, 60_000))
            }
            var descriptors = [pollfd(fd: wakeDescriptor, events: Int16(POLLIN), revents: 0),
                               pollfd(fd: descriptor, events: Int16(truncatingIfNeeded: max(events, 0)), revents: 0)]
            _ = poll(&descriptors, nfds_t(descriptors.count), timeoutMilliseconds)
            var count: UInt64 = 0
            _ = read(wakeDescriptor, &count, 8)
        }
        lock.withLock {
            for subscription in subscriptions.values {
                if let slot = subscription.slot { sd_bus_slot_unref(slot) }
                subscription.slot = nil
            }
            subscriptions.removeAll()
            if let bus { sd_bus_flush_close_unref(bus) }
            bus = nil
        }
        if let disconnection, let onDisconnected { onDisconnected(disconnection) }
    }
}

/// What a subscription does with the messages sd-bus hands it.
enum MessageHandler {
    case signal(@Sendable (DBusSignal) -> Void)
    case object(ExportedObject)
}

extension DBusSubscription {
    /// The userdata sd-bus passes back: unretained, since the connection keeps the
    /// subscription alive for as long as its slot exists.
    fileprivate var context: UnsafeMutableRawPointer { Unmanaged.passUnretained(self).toOpaque() }
}

/// sd-bus's callback for every match and exported object (called under the connection's lock,
/// on its thread).
private let dispatchMessage: sd_bus_message_handler_t = { message, userdata, _ in
    guard let message, let userdata else { return 0 }
    let subscription = Unmanaged<DBusSubscription>.fromOpaque(userdata).takeUnretainedValue()
    switch subscription.handler {
    case .signal(let handler):
        guard let arguments = try? DBusMessageCoding.readAll(message) else { return 0 }
        handler(DBusSignal(sender: sd_bus_message_get_sender(message).map { String(cString: $0) },
                           path: sd_bus_message_get_path(message).map { String(cString: $0) } ?? "",
                           interface: sd_bus_message_get_interface(message).map { String(cString: $0) } ?? "",
                           member: sd_bus_message_get_member(message).map { String(cString: $0) } ?? "",
                           arguments: arguments))
        return 0  // other matches may want it too
    case .object(let object):
        return object.handle(message)
    }
}
