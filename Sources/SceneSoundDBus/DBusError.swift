import CSystemd
import Glibc

/// A D-Bus error as a value: the error name (`org.freedesktop.DBus.Error.AccessDenied`,
/// `org.kde.kwin.Scripting.Error…`, `System.Error.ECONNREFUSED` for a local failure) and its
/// message. What a peer replied, or what sd-bus reported locally.
public struct DBusError: Error, Equatable, Sendable, CustomStringConvertible {
    public var name: String
    public var message: String

    public init(name: String, message: String) {
        self.name = name
        self.message = message
    }

    public var description: String { message.isEmpty ? name : "\(name): \(message)" }

    public static let accessDeniedName = "org.freedesktop.DBus.Error.AccessDenied"
    public static let invalidArgumentsName = "org.freedesktop.DBus.Error.InvalidArgs"
    public static let failedName = "org.freedesktop.DBus.Error.Failed"
    public static let unknownMethodName = "org.freedesktop.DBus.Error.UnknownMethod"
    public static let nameHasNoOwnerName = "org.freedesktop.DBus.Error.NameHasNoOwner"
    public static let serviceUnknownName = "org.freedesktop.DBus.Error.ServiceUnknown"

    public static func accessDenied(_ message: String) -> DBusError { DBusError(name: accessDeniedName, message: message) }
    public static func invalidArguments(_ message: String) -> DBusError { DBusError(name: invalidArgumentsName, message: message) }
    public static func failed(_ message: String) -> DBusError { DBusError(name: failedName, message: message) }

    /// sd-bus's error, or the errno of a call that set none (sd-bus maps errnos to names).
    init(_ error: borrowing sd_bus_error, result: Int32, doing what: String) {
        if let name = error.name {
            self.init(name: String(cString: name), message: error.message.map { String(cString: $0) } ?? what)
        } else {
            self.init(errno: -result, doing: what)
        }
    }

    /// A local failure: `System.Error.E…` as sd-bus names it, with strerror and what was being done.
    init(errno number: Int32, doing what: String) {
        var error = sd_bus_error()
        sd_bus_error_set_errno(&error, number)
        defer { sd_bus_error_free(&error) }
        let name = error.name.map { String(cString: $0) } ?? DBusError.failedName
        self.init(name: name, message: "\(what): \(String(cString: strerror(number)))")
    }
}
