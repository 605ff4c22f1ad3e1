import CLiblo
import Logging
import NIOCore
import SceneSoundDSP

/// OSC head poses over UDP, on the event loop. The datagrams arrive on a SwiftNIO UDP socket
/// like opentrack's and are parsed by liblo's message parser (`lo_message_deserialise`), not by
/// a liblo server: its server thread wakes up ten times a second even with nothing to read and
/// would hand poses over from another thread, where this keeps one loop, one rate limiter
/// before any parsing, and no thread of its own. Datagrams over the rate (which `scenesound
/// head tracker --rate` sets at run time) are dropped unread and counted, and so are all of
/// them while opentrack alone is followed; malformed ones are counted and logged at most once
/// every ten seconds.
final class OSCHandler: ChannelInboundHandler, @unchecked Sendable {
    typealias InboundIn = AddressedEnvelope<ByteBuffer>
    private let head: HeadTracking
    private let formats: [OSCPoseFormat]
    private let ownRate: Int
    private var rate: MessageRateLimiter
    private let logger: Logger
    private var lastMalformedReport: NIODeadline?
    private var malformedSinceReport = 0

    init(head: HeadTracking, formats: [OSCPoseFormat], packetsPerSecond: Int, logger: Logger) {
        self.head = head
        self.formats = formats
        self.logger = logger
        ownRate = packetsPerSecond
        rate = MessageRateLimiter(messagesPerSecond: packetsPerSecond)
        head.defaultPosesPerSecond[.osc] = packetsPerSecond
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard head.follows(.osc) else { return }
        let now = context.eventLoop.now
        rate.setRate(head.posesPerSecondLimit(default: ownRate))
        guard rate.take(now: now) else {
            head.oscRateLimited += 1
            return
        }
        let outcome = unwrapInboundIn(data).data.withUnsafeReadableBytes { OSCPacket.decode($0, formats: formats) }
        switch outcome {
        case .pose(let pose):
            head.oscAccepted += 1
            head.update(pose, from: .osc)
        case .otherAddress:
            break
        case .malformed(let reason):
            head.oscRejected += 1
            if let last = lastMalformedReport, now - last < .seconds(10) {
                malformedSinceReport += 1
            } else {
                let more = malformedSinceReport > 0 ? " (and \(malformedSinceReport) more since the last report)" : ""
                logger.warning("OSC: malformed packet ignored: \(reason)\(more)")
                lastMalformedReport = now
                malformedSinceReport = 0
            }
        }
    }
}

/// One OSC address carrying a head pose, and what each of its arguments is in SceneSound's
/// axes (docs/ARCHITECTURE.md "Conventions": +x right, +y up, +z back; yaw + left, pitch + up,
/// roll + tilted right). Arguments are either yaw, pitch and roll in degrees, or a quaternion's
/// w, x, y and z; each is named in the message's order, `-` before a name negates it:
/// `-yaw,pitch,roll` for a sender whose yaw is positive to the right.
public struct OSCPoseFormat: Sendable, Equatable, CustomStringConvertible {
    public enum Component: String, Sendable { case yaw, pitch, roll, w, x, y, z }
    public struct Axis: Sendable, Equatable {
        public var component: Component
        public var negated: Bool
    }

    public let address: String
    public let axes: [Axis]

    /// IEM SceneRotator's yaw, pitch, roll in degrees, in IEM's axes (x front, y left, z up, all
    /// right-handed): yaw + turns left, pitch + tips the nose down, roll + tilts right.
    public static let sceneRotatorYawPitchRoll = try! OSCPoseFormat(address: "/SceneRotator/ypr", axes: "yaw,-pitch,roll")
    /// IEM SceneRotator's quaternion w, x, y, z in the same axes: IEM's x (front) is our −z,
    /// its y (left) our −x, its z (up) our y.
    public static let sceneRotatorQuaternions = try! OSCPoseFormat(address: "/SceneRotator/quaternions", axes: "w,-z,-x,y")
    public static let defaultAxes = "yaw,pitch,roll"
    static let acceptedAxes = "yaw, pitch and roll (degrees) or w, x, y and z (a quaternion), each once, in the message's order, comma-separated, each optionally negated with '-' (e.g. -yaw,pitch,roll or x,-z,y,w)"

    public struct Invalid: Error, CustomStringConvertible {
        public let description: String
    }

    public init(address: String, axes specification: String = OSCPoseFormat.defaultAxes) throws(Invalid) {
        guard address.hasPrefix("/"), address.count > 1, !address.contains(where: { $0 == " " || $0 == "#" || $0 == "," }) else {
            throw Invalid(description: "'\(address)' is not an OSC address (accepted: a path starting with '/', e.g. /head/ypr)")
        }
        var axes: [Axis] = []
        for part in specification.split(separator: ",", omittingEmptySubsequences: false) {
            var name = part.trimmingCharacters(in: .whitespaces)
            let negated = name.hasPrefix("-")
            if negated || name.hasPrefix("+") { name.removeFirst() }
            guard let component = Component(rawValue: name) else {
                throw Invalid(description: "'\(specification)' is not valid (accepted: \(Self.acceptedAxes))")
            }
            axes.append(Axis(component: component, negated: negated))
        }
        let names = Set(axes.map(\.component))
        guard names.count == axes.count,
              names == [.yaw, .pitch, .roll] || names == [.w, .x, .y, .z] else {
            throw Invalid(description: "'\(specification)' is not valid (accepted: \(Self.acceptedAxes))")
        }
        self.address = address
        self.axes = axes
    }

    var isQuaternion: Bool { axes.count == 4 }

    public var description: String {
        "\(address) " + axes.map { ($0.negated ? "-" : "") + $0.component.rawValue }.joined(separator: ",")
    }

    /// The pose the arguments stand for; nil when they do not make one. A quaternion sender
    /// that leaves out a last w (Android's rotation vectors may) gets it from the other three.
    func pose(_ arguments: [Double]) -> SceneSoundDSP.HeadPose? {
        var arguments = arguments
        if isQuaternion, arguments.count == 3, axes[3].component == .w {
            arguments.append((max(0, 1 - arguments.reduce(0) { $0 + $1 * $1 })).squareRoot())
        }
        guard arguments.count >= axes.count, arguments.prefix(axes.count).allSatisfy(\.isFinite) else { return nil }
        var value: [Component: Double] = [:]
        for (axis, argument) in zip(axes, arguments) { value[axis.component] = axis.negated ? -argument : argument }
        if isQuaternion {
            let q = SceneSoundDSP.Quaternion(w: value[.w]!, x: value[.x]!, y: value[.y]!, z: value[.z]!)
            let norm = (q.w * q.w + q.x * q.x + q.y * q.y + q.z * q.z).squareRoot()
            guard (0.5...1.5).contains(norm) else { return nil }
            return SceneSoundDSP.HeadPose(orientation: q.normalized)
        }
        let (yaw, pitch, roll) = (value[.yaw]!, value[.pitch]!, value[.roll]!)
        guard [yaw, pitch, roll].allSatisfy({ abs($0) <= 360 }) else { return nil }
        return SceneSoundDSP.HeadPose(orientation: SceneSoundDSP.Quaternion(yawDegrees: yaw, pitchDegrees: pitch, rollDegrees: roll))
    }
}

/// An OSC datagram: one message or a bundle of them (nested bundles too), parsed by liblo.
enum OSCPacket {
    enum Outcome: Equatable {
        case pose(SceneSoundDSP.HeadPose)
        /// Well formed, but no address we read (a sender may send many).
        case otherAddress
        case malformed(String)
    }

    /// The last pose in the datagram (a bundle's messages arrive at once; the latest wins).
    static func decode(_ bytes: UnsafeRawBufferPointer, formats: [OSCPoseFormat]) -> Outcome {
        var outcome = Outcome.otherAddress
        var problem: String?
        visitMessages(bytes, depth: 0) { element in
            switch message(element, formats: formats) {
            case .pose(let pose): outcome = .pose(pose)
            case .otherAddress: break
            case .malformed(let reason): problem = problem ?? reason
            }
        } failed: { reason in problem = problem ?? reason }
        if let problem, case .otherAddress = outcome { return .malformed(problem) }
        return outcome
    }

    private static let bundleTag = Array("#bundle\0".utf8)

    /// Calls `visit` with each message of a datagram, descending into bundles: "#bundle\0",
    /// an 8-byte time tag, then elements each preceded by its big-endian 32-bit size.
    private static func visitMessages(_ bytes: UnsafeRawBufferPointer, depth: Int,
                                      visit: (UnsafeRawBufferPointer) -> Void, failed: (String) -> Void) {
        guard bytes.count >= 8, bytes.prefix(8).elementsEqual(bundleTag) else { return visit(bytes) }
        guard depth < 4 else { return failed("bundles nested deeper than 4") }
        guard bytes.count >= 16 else { return failed("a bundle of \(bytes.count) bytes has no time tag") }
        var offset = 16
        while offset < bytes.count {
            guard offset + 4 <= bytes.count else { return failed("a bundle element's size is cut short") }
            let size = Int(UInt32(bigEndian: bytes.loadUnaligned(fromByteOffset: offset, as: UInt32.self)))
            offset += 4
            guard size > 0, size % 4 == 0, size <= bytes.count - offset else {
                return failed("a bundle element of \(size) bytes does not fit the \(bytes.count - offset) left")
            }
            visitMessages(UnsafeRawBufferPointer(rebasing: bytes[offset..<(offset + size)]), depth: depth + 1,
                          visit: visit, failed: failed)
            offset += size
        }
    }

    /// One message through liblo: its address, then its numbers if the address is ours.
    private static func message(_ bytes: UnsafeRawBufferPointer, formats: [OSCPoseFormat]) -> Outcome {
        // liblo's parser takes a mutable pointer; it copies what it keeps.
        var copy = Array(bytes)
        var result: Int32 = 0
        guard let message = copy.withUnsafeMutableBytes({ lo_message_deserialise($0.baseAddress, $0.count, &result) }) else {
            return .malformed("not an OSC message (\(bytes.count) bytes, liblo error \(result))")
        }
        defer { lo_message_free(message) }
        // Deserialising checked the address: a terminated string at the start.
        let address = copy.withUnsafeBytes { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
        guard let format = formats.first(where: { $0.address.caseInsensitiveCompare(address) == .orderedSame }) else {
            return .otherAddress
        }
        let count = Int(lo_message_get_argc(message))
        guard let types = lo_message_get_types(message), let arguments = lo_message_get_argv(message) else {
            return .malformed("\(address) with no arguments (expected \(format.axes.count) numbers)")
        }
        var values: [Double] = []
        for i in 0..<count {
            let tag = UInt8(bitPattern: types[i])
            guard let argument = arguments[i], let value = number(tag, argument.pointee) else {
                return .malformed("\(address): argument \(i + 1) is of OSC type '\(Character(UnicodeScalar(tag)))', not a number")
            }
            values.append(value)
        }
        guard let pose = format.pose(values) else {
            return .malformed("\(address) \(values.map { "\($0)" }.joined(separator: " ")): not a pose (expected \(format.axes.map(\.component.rawValue).joined(separator: " ")))")
        }
        return .pose(pose)
    }

    /// An argument of OSC's numeric types (float, double, 32- and 64-bit integers).
    private static func number(_ tag: UInt8, _ argument: lo_arg) -> Double? {
        switch tag {
        case UInt8(ascii: "f"): return Double(argument.f)
        case UInt8(ascii: "d"): return argument.d
        case UInt8(ascii: "i"): return Double(argument.i)
        case UInt8(ascii: "h"): return Double(argument.h)
        default: return nil
        }
    }
}
