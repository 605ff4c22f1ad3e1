import Foundation
import Logging
import NIOCore
import SceneSoundProtocol

/// `struct ucred` from <sys/socket.h> (Swift's Glibc hides it without _GNU_SOURCE).
struct PeerCredentials: Sendable {
    var pid: Int32 = 0
    var uid: UInt32 = 0
    var gid: UInt32 = 0
}

/// Said to a session by the handler in front of it that checks who connected (SO_PEERCRED).
enum PeerAdmission {
    case admitted(peerPID: Int32)
    case refused(ProtocolError)
}

/// First in a Unix-socket client's pipeline: who is at the other end (SO_PEERCRED: only the
/// server's own user, and root if allowed) and whether there is room for another client. It
/// tells the session behind it with a `PeerAdmission` event; the session answers a refusal.
final class PeerAdmissionHandler: ChannelInboundHandler, @unchecked Sendable {
    typealias InboundIn = ByteBuffer
    private let configuration: ServerConfiguration
    private let sessions: SessionRegistry
    private let counters: ServerCounters
    private let logger: Logger

    init(configuration: ServerConfiguration, sessions: SessionRegistry, counters: ServerCounters, logger: Logger) {
        self.configuration = configuration
        self.sessions = sessions
        self.counters = counters
        self.logger = logger
    }

    func channelActive(context: ChannelHandlerContext) {
        context.fireChannelActive()
        guard let provider = context.channel as? SocketOptionProvider else {
            return refuse(context, ProtocolError(.notPermitted, "peer credentials unavailable"))
        }
        let credentials: EventLoopFuture<PeerCredentials> = provider.unsafeGetSocketOption(
            level: SocketOptionLevel(SOL_SOCKET), name: SocketOptionName(SO_PEERCRED))
        let context = NIOLoopBound(context, eventLoop: context.eventLoop)
        credentials.whenComplete { [self] result in
            let context = context.value
            switch result {
            case .success(let peer):
                // The session being admitted is already in the registry.
                switch Self.verdict(peer: peer, serverUID: getuid(), allowRoot: configuration.allowRoot,
                                    otherClients: sessions.count - 1, maximumClients: configuration.maximumClients) {
                case .admitted(let pid): context.fireUserInboundEventTriggered(PeerAdmission.admitted(peerPID: pid))
                case .refused(let error): refuse(context, error)
                }
            case .failure(let error):
                refuse(context, ProtocolError(.notPermitted, "peer credentials unavailable: \(error)"))
            }
        }
    }

    /// Only the server's own user may connect (and root, if allowed), while there is room.
    static func verdict(peer: PeerCredentials, serverUID: UInt32, allowRoot: Bool,
                        otherClients: Int, maximumClients: Int) -> PeerAdmission {
        guard peer.uid == serverUID || (peer.uid == 0 && allowRoot) else {
            return .refused(ProtocolError(.notPermitted, "uid \(peer.uid) may not use uid \(serverUID)'s sound server"))
        }
        guard otherClients < maximumClients else {
            return .refused(ProtocolError(.limitExceeded, "the server takes \(maximumClients) clients at most"))
        }
        return .admitted(peerPID: peer.pid)
    }

    private func refuse(_ context: ChannelHandlerContext, _ error: ProtocolError) {
        counters.refusedConnections += 1
        logger.warning("refused a connection: \(error.detail)")
        context.fireUserInboundEventTriggered(PeerAdmission.refused(error))
    }
}
