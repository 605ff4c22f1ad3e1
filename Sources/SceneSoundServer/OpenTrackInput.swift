import NIOCore
import SceneSoundDSP

/// opentrack's datagrams into the head tracking, on the event loop. A token bucket bounds how
/// many are decoded a second (`ServerConfiguration.maximumOpenTrackPacketsPerSecond`, bursts of
/// a second's worth): anything on loopback can send to the port, and a flood must not turn into
/// a flood of engine commands. Datagrams over the rate are dropped unread and counted; so are
/// all of them while OSC alone is followed (`HeadTracking.follows`). `scenesound head tracker
/// --rate` sets the rate at run time.
final class OpenTrackHandler: ChannelInboundHandler, @unchecked Sendable {
    typealias InboundIn = AddressedEnvelope<ByteBuffer>
    private let head: HeadTracking
    private let ownRate: Int
    private var rate: MessageRateLimiter

    init(head: HeadTracking, packetsPerSecond: Int) {
        self.head = head
        ownRate = packetsPerSecond
        rate = MessageRateLimiter(messagesPerSecond: packetsPerSecond)
        head.defaultPosesPerSecond[.opentrack] = packetsPerSecond
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard head.follows(.opentrack) else { return }
        rate.setRate(head.posesPerSecondLimit(default: ownRate))
        guard rate.take(now: context.eventLoop.now) else {
            head.openTrackRateLimited += 1
            return
        }
        unwrapInboundIn(data).data.withUnsafeReadableBytes { head.receiveOpenTrack($0) }
    }
}

/// opentrack's "UDP over network" output: 48-byte datagrams of six little-endian doubles —
/// x, y, z in centimetres, yaw, pitch, roll in degrees. Longer datagrams are accepted and what
/// follows the six doubles is ignored: XRLinuxDriver (XREAL, VITURE, Rokid glasses) sends the
/// same six doubles plus a 32-bit frame counter, 52 bytes, to the same port.
///
/// Axes, as opentrack's own X-Plane output interprets them: yaw positive = head turned left,
/// pitch positive = looking up, roll positive = tilted left, x positive = moved left,
/// y positive = up, z positive = moved back (away from the screen). SceneSound's conventions
/// (docs/ARCHITECTURE.md "Conventions") are yaw + left, pitch + up, roll + right, +x right, +y up, +z back, so:
///
///   yaw = yaw, pitch = pitch, roll = −roll, x = −x/100, y = y/100, z = z/100 (metres).
///
/// A tracker whose axes differ is corrected in opentrack's Output options (Invert).
enum OpenTrackPacket {
    /// The six doubles; a datagram may carry more (ignored).
    static let minimumByteCount = 48

    static func decode(_ bytes: UnsafeRawBufferPointer) -> SceneSoundDSP.HeadPose? {
        guard bytes.count >= minimumByteCount else { return nil }
        var values = [Double](repeating: 0, count: 6)
        for i in 0..<6 {
            values[i] = Double(bitPattern: UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: i * 8, as: UInt64.self)))
        }
        guard values.allSatisfy({ $0.isFinite }),
              values[0...2].allSatisfy({ abs($0) <= 1000 }),        // within 10 m
              values[3...5].allSatisfy({ abs($0) <= 360 }) else { return nil }
        let (x, y, z, yaw, pitch, roll) = (values[0], values[1], values[2], values[3], values[4], values[5])
        return SceneSoundDSP.HeadPose(orientation: SceneSoundDSP.Quaternion(yawDegrees: yaw, pitchDegrees: pitch, rollDegrees: -roll),
                        positionMetres: Vector3(x: -x / 100, y: y / 100, z: z / 100))
    }
}
