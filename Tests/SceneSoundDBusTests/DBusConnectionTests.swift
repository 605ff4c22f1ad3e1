import Foundation
import Synchronization
import Testing
import SceneSoundDBus
import SceneSoundTestSupport

/// SceneSoundDBus against a real message bus: a private `dbus-daemon --session` per test, with
/// connections calling each other, a caller refused, a name changing owners.
@Suite(.serialized) struct DBusConnectionTests {
    static let path = "/org/scenesound/Test"
    static let interface = "org.scenesound.Test1"

    /// One exported object whose `Report(s)` and `Echo(sib)` answer only `allowed`; it records
    /// the payloads it accepted.
    final class Receiver: Sendable {
        final class State: Sendable {
            let allowed = Mutex<String?>(nil)
            let payloads = Mutex<[String]>([])
        }
        let connection: DBusConnection
        let state = State()
        let subscription: DBusSubscription

        init(address: String) throws {
            connection = try DBusConnection(address: address)
            let state = self.state
            let conn = connection
            subscription = try connection.exportObject(path: DBusConnectionTests.path, interface: DBusConnectionTests.interface, methods: [
                DBusMethod(name: "Report", inputSignature: "s") { call in
                    state.payloads.withLock { $0.append(call.arguments[0].string ?? "") }
                    return .success([])
                },
                DBusMethod(name: "Echo", inputSignature: "sib", outputSignature: "sisb") { call in
                    // A call of the connection's own from its handler: the bus's owner of a name.
                    let owner = (try? conn.nameOwner("org.freedesktop.DBus")) ?? "?"
                    guard case .string(let text) = call.arguments[0], case .int32(let number) = call.arguments[1],
                          case .bool(let flag) = call.arguments[2] else { return .failure(.invalidArguments("?")) }
                    return .success([.string(text.uppercased()), .int32(number * 2), .string(owner), .bool(!flag)])
                },
            ]) { state.allowed.withLock { $0 } }
        }
    }

    @Test func twoConnectionsCallEachOtherAndAnotherCallerIsRefused() throws {
        let bus = try PrivateSessionBus()
        defer { bus.stop() }
        let receiver = try Receiver(address: bus.address)
        let caller = try DBusConnection(address: bus.address)
        let stranger = try DBusConnection(address: bus.address)
        defer { [receiver.connection, caller, stranger].forEach { $0.close() } }
        #expect(receiver.connection.uniqueName.hasPrefix(":") && caller.uniqueName != receiver.connection.uniqueName)
        receiver.state.allowed.withLock { $0 = caller.uniqueName }

        let reply = try caller.call(destination: receiver.connection.uniqueName, path: Self.path, interface: Self.interface,
                                    member: "Echo", arguments: [.string("left"), .int32(21), .bool(false)])
        #expect(reply == [.string("LEFT"), .int32(42), .string("org.freedesktop.DBus"), .bool(true)])

        // The expected payload of a window backend: a JSON document of some size, as one string.
        let json = "{\"windows\":[" + (0..<500).map { "{\"id\":\($0),\"caption\":\"ünïcode \\\"quoted\\\" \($0)\"}" }.joined(separator: ",") + "]}"
        _ = try caller.call(destination: receiver.connection.uniqueName, path: Self.path, interface: Self.interface,
                            member: "Report", arguments: [.string(json)])
        #expect(receiver.state.payloads.withLock { $0 } == [json])

        // Anyone else: AccessDenied, and nothing reaches the handler.
        #expect(throws: DBusError.self) {
            try stranger.call(destination: receiver.connection.uniqueName, path: Self.path, interface: Self.interface,
                              member: "Report", arguments: [.string("{\"windows\":[]}")])
        }
        do {
            _ = try stranger.call(destination: receiver.connection.uniqueName, path: Self.path, interface: Self.interface,
                                  member: "Report", arguments: [.string("{}")])
        } catch {
            #expect(error.name == DBusError.accessDeniedName, "\(error)")
            #expect(error.message.contains(stranger.uniqueName), "\(error)")
        }
        #expect(receiver.state.payloads.withLock { $0.count } == 1)
        // Nobody allowed (the peer is gone): the allowed caller is refused too.
        receiver.state.allowed.withLock { $0 = nil }
        #expect(Self.errorName { _ = try caller.call(destination: receiver.connection.uniqueName, path: Self.path,
                                                     interface: Self.interface, member: "Report", arguments: [.string("{}")]) }
                == DBusError.accessDeniedName)
        receiver.state.allowed.withLock { $0 = caller.uniqueName }

        // Wrong arguments, an unknown method, nobody there: each its D-Bus error, as a value.
        #expect(Self.errorName { _ = try caller.call(destination: receiver.connection.uniqueName, path: Self.path,
                                                     interface: Self.interface, member: "Report", arguments: [.int32(1)]) }
                == DBusError.invalidArgumentsName)
        #expect(Self.errorName { _ = try caller.call(destination: receiver.connection.uniqueName, path: Self.path,
                                                     interface: Self.interface, member: "Change", arguments: []) }
                == DBusError.unknownMethodName)
        #expect(Self.errorName { _ = try caller.call(destination: "org.scenesound.Nobody", path: Self.path,
                                                     interface: Self.interface, member: "Report", arguments: [.string("")]) }
                == DBusError.serviceUnknownName)
        #expect(receiver.state.payloads.withLock { $0.count } == 1)

        // Introspection answers anyone, and names the methods.
        let xml = try stranger.call(destination: receiver.connection.uniqueName, path: Self.path,
                                    interface: "org.freedesktop.DBus.Introspectable", member: "Introspect").first?.string ?? ""
        #expect(xml.contains("<method name=\"Report\"><arg name=\"argument0\" type=\"s\" direction=\"in\"/>"), "\(xml)")
    }

    @Test func aNamesOwnerIsFollowedThroughItsChanges() throws {
        let bus = try PrivateSessionBus()
        defer { bus.stop() }
        let watcher = try DBusConnection(address: bus.address)
        let owners = Mutex<[String?]>([])
        let watch = try watcher.watchNameOwner("org.scenesound.Compositor") { owner in owners.withLock { $0.append(owner) } }
        defer { watch.cancel(); watcher.close() }
        #expect(owners.withLock { $0 } == [nil])

        let first = try DBusConnection(address: bus.address)
        #expect(try first.requestName("org.scenesound.Compositor"))
        #expect(try watcher.nameOwner("org.scenesound.Compositor") == first.uniqueName)
        try #require(waitUntil(timeoutSeconds: 5) { owners.withLock { $0.last } == first.uniqueName })

        // The owner's process ends (its connection closes): the name is free, then someone else's.
        first.close()
        try #require(waitUntil(timeoutSeconds: 5) { owners.withLock { $0.last } == .some(nil) })
        let second = try DBusConnection(address: bus.address)
        defer { second.close() }
        #expect(try second.requestName("org.scenesound.Compositor"))
        try #require(waitUntil(timeoutSeconds: 5) { owners.withLock { $0.last } == second.uniqueName })
        #expect(owners.withLock { $0 } == [nil, first.uniqueName, nil, second.uniqueName])

        // A cancelled watch hears nothing more.
        watch.cancel()
        try second.releaseName("org.scenesound.Compositor")
        #expect(try watcher.nameOwner("org.scenesound.Compositor") == nil)
        #expect(owners.withLock { $0.count } == 4)
    }

    /// Idle means blocked in poll(): the connection's thread wakes for nothing over a second
    /// (no timers), and is stopped through its wake descriptor.
    @Test func anIdleConnectionsThreadSleepsAndStops() throws {
        let bus = try PrivateSessionBus()
        defer { bus.stop() }
        // Other suites' connections may be running in this process: ours is the thread that
        // appears (and is named, from the thread itself) once the connection opens.
        let others = Set(Self.threads(named: DBusConnection.threadName))
        let connection = try DBusConnection(address: bus.address)
        let watch = try connection.watchNameOwner("org.scenesound.Compositor") { _ in }
        _ = watch
        var ours: String?
        try waitUntil(timeoutSeconds: 5, "the connection's thread") {
            ours = Set(Self.threads(named: DBusConnection.threadName)).subtracting(others).first
            return ours != nil
        }
        let thread = try #require(ours)
        // The match's and the query's replies dispatched: the thread asleep in poll().
        try waitUntil(timeoutSeconds: 5, "the connection's thread asleep") { Self.isSleeping(thread: thread) }
        let before = Self.contextSwitches(thread: thread)
        Thread.sleep(forTimeInterval: 1)
        let wakeUps = Self.contextSwitches(thread: thread) - before
        print("D-Bus connection idle: \(wakeUps) wake-ups in 1 s")
        #expect(wakeUps <= 1)

        connection.close()
        #expect(!Self.threads(named: DBusConnection.threadName).contains(thread))
        #expect(!connection.isOpen)
        #expect(Self.errorName { _ = try connection.nameOwner("org.freedesktop.DBus") } == "org.freedesktop.DBus.Error.Disconnected")
    }

    @Test func theBusGoingAwayIsReportedAndAnUnreachableBusIsAnError() throws {
        let bus = try PrivateSessionBus()
        defer { bus.stop() }
        let lost = Mutex<DBusError?>(nil)
        let connection = try DBusConnection(address: bus.address) { error in lost.withLock { $0 = error } }
        bus.kill()
        try #require(waitUntil(timeoutSeconds: 5) { lost.withLock { $0 } != nil })
        #expect(!connection.isOpen)
        connection.close()

        // No socket there: ENOENT, which sd-bus names as D-Bus does.
        let unreachable = Self.errorName { _ = try DBusConnection(address: "unix:path=\(bus.directory)/nothing-here") }
        #expect(unreachable == "org.freedesktop.DBus.Error.FileNotFound", "\(unreachable ?? "no error")")
        #expect(Self.errorName { _ = try DBusConnection.sessionBus(environment: [:]) } == DBusError.failedName)
    }

    static func errorName(_ body: () throws -> Void) -> String? {
        do {
            try body()
            return nil
        } catch {
            return (error as? DBusError)?.name ?? "not a DBusError: \(error)"
        }
    }

    /// This process's threads with that name (their task ids).
    static func threads(named name: String) -> [String] {
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? []
        return tasks.filter { task in
            (try? String(contentsOfFile: "/proc/self/task/\(task)/comm", encoding: .utf8))?
                .trimmingCharacters(in: .whitespacesAndNewlines) == name
        }
    }

    /// The thread's state in /proc is S (sleeping, here in poll()).
    static func isSleeping(thread: String) -> Bool {
        let stat = (try? String(contentsOfFile: "/proc/self/task/\(thread)/stat", encoding: .utf8)) ?? ""
        guard let afterName = stat.range(of: ") ", options: .backwards) else { return false }
        return stat[afterName.upperBound...].first == "S"
    }

    static func contextSwitches(thread: String) -> Int {
        let status = (try? String(contentsOfFile: "/proc/self/task/\(thread)/status", encoding: .utf8)) ?? ""
        return status.split(separator: "\n").filter { $0.contains("ctxt_switches") }
            .compactMap { Int($0.split(separator: ":").last!.trimmingCharacters(in: .whitespaces)) }.reduce(0, +)
    }
}
