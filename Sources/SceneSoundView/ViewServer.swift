import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOWebSocket
import Synchronization

/// One thing the page asks for. Each maps onto a CLI verb's protocol operation, carried out by
/// the `scenesound view` command (the module knows no client): `place` (`scene place`),
/// `exclude` / `include` (`apps exclude|include`), `hrtf_use` (`hrtf use`), `hrtf_compare`
/// (`hrtf compare`), `eq_use` (`eq use`), `recenter` (`head recenter`), `app_spatial`
/// (`apps spatial`), `head_tracking` (`head tracking`), `head_tracker` (`head tracker`),
/// `device_spatial` (`spatial`),
/// `device_render` (`device render`).
public struct ViewAction: Codable, Sendable, Equatable {
    public var id: Int
    public var action: String
    public var scene: String?
    public var azimuthDegrees: Double?
    public var elevationDegrees: Double?
    public var distanceMetres: Double?
    /// An app's name, or an HRTF set's name.
    public var name: String?
    /// `hrtf_compare`'s second set.
    public var other: String?
    /// `eq_use`'s file, or "none".
    public var path: String?
    /// `app_spatial`'s mode (`anchored`, `head-locked`, `off`), `head_tracking`'s (`full`,
    /// `yaw-only`, `off`), `head_tracker`'s (`any`, `opentrack`, `osc`), `device_spatial`'s (`off`, `fixed`, `head-tracked`), `device_render`'s (`auto`, `headphones`, `speakers`).
    public var mode: String?
    /// `head_tracking`'s rest before recentering (0 or absent: off).
    public var seconds: Double?
    /// `head_tracker`'s rate (0 or absent: each input's own limit).
    public var posesPerSecond: Double?

    public init(id: Int, action: String, scene: String? = nil, azimuthDegrees: Double? = nil, elevationDegrees: Double? = nil,
                distanceMetres: Double? = nil, name: String? = nil, other: String? = nil, path: String? = nil, mode: String? = nil,
                seconds: Double? = nil, posesPerSecond: Double? = nil) {
        self.id = id
        self.action = action
        self.scene = scene
        self.azimuthDegrees = azimuthDegrees
        self.elevationDegrees = elevationDegrees
        self.distanceMetres = distanceMetres
        self.name = name
        self.other = other
        self.path = path
        self.mode = mode
        self.seconds = seconds
        self.posesPerSecond = posesPerSecond
    }

    enum CodingKeys: String, CodingKey {
        case id, action, scene, azimuthDegrees = "azimuth_degrees", elevationDegrees = "elevation_degrees"
        case distanceMetres = "distance_metres", name, other, path, mode, seconds, posesPerSecond = "poses_per_second"
    }
}

/// `scenesound view`'s web server: the page, its script and style, and one WebSocket per page
/// over which the scene is pushed and actions come back. Bound to 127.0.0.1 only; every request
/// passes `ViewAccess` (token, Host, Origin), the WebSocket upgrade included. SwiftNIO's
/// HTTP/1 and WebSocket codecs, one event loop thread.
public final class ViewServer: @unchecked Sendable {
    /// Carries out an action (called off the event loop, may block); the message shown on the page.
    public typealias ActionHandler = @Sendable (ViewAction) -> (ok: Bool, message: String)

    private let token: String
    private let setupJSON: String
    private let actionHandler: ActionHandler
    private let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
    private var channel: Channel?
    private let state = Mutex(State())
    private let actionQueue = DispatchQueue(label: "scenesound.view.actions", attributes: .concurrent)

    private struct State {
        var access: ViewAccess?
        var viewers: [ObjectIdentifier: Viewer] = [:]
        var latest: String?
        var everConnected = false
        var lastLeftUptimeNanoseconds: UInt64?
        var wakeActive: (@Sendable () -> Void)?
    }

    struct Viewer {
        let channel: Channel
        var visible: Bool
    }

    /// `setupJSON`: sent to each page once as it connects (e.g. the HRTF sets to choose from).
    public init(token: String = ViewAccess.randomToken(), setupJSON: String, actionHandler: @escaping ActionHandler) {
        self.token = token
        self.setupJSON = setupJSON
        self.actionHandler = actionHandler
    }

    public var access: ViewAccess? { state.withLock { $0.access } }

    /// Binds 127.0.0.1:`port` (0: a free one) and serves; returns the port.
    public func start(port: Int) throws -> Int {
        let bootstrap = ServerBootstrap(group: group)
            .serverChannelOption(ChannelOptions.backlog, value: 16)
            .serverChannelOption(ChannelOptions.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { [self] channel in
                let http = HTTPHandler(server: self)
                let upgrader = NIOWebSocketServerUpgrader(
                    maxFrameSize: 1 << 16,
                    shouldUpgrade: { [self] channel, head in
                        let allowed = ViewAccess.path(of: head.uri) == "/ws" && decide(head).isAllowed
                        return channel.eventLoop.makeSucceededFuture(allowed ? HTTPHeaders() : nil)
                    },
                    upgradePipelineHandler: { [self] channel, _ in
                        channel.pipeline.addHandler(WebSocketHandler(server: self))
                    })
                return channel.pipeline.configureHTTPServerPipeline(
                    withServerUpgrade: (upgraders: [upgrader], completionHandler: { context in
                        // Upgraded: the page's handler leaves, WebSocket frames pass.
                        context.pipeline.removeHandler(http, promise: nil)
                    })
                ).flatMap {
                    channel.pipeline.addHandler(http)
                }
            }
        let bound = try bootstrap.bind(host: "127.0.0.1", port: port).wait()
        channel = bound
        guard let actual = bound.localAddress?.port else { throw ViewServerError("no port bound") }
        state.withLock { $0.access = ViewAccess(token: token, port: actual) }
        return actual
    }

    public func stop() {
        try? channel?.close().wait()
        try? group.syncShutdownGracefully()
    }

    // MARK: Viewers

    /// Pages connected now, and pages connected and visible.
    public var viewerCounts: (connected: Int, visible: Int) {
        state.withLock { ($0.viewers.count, $0.viewers.values.filter(\.visible).count) }
    }

    /// Seconds since the last page closed, once every page has closed after one was open;
    /// nil while a page is open or before the first.
    public func secondsSinceLastPageClosed(nowUptimeNanoseconds: UInt64 = DispatchTime.now().uptimeNanoseconds) -> Double? {
        state.withLock { state in
            guard state.everConnected, state.viewers.isEmpty, let left = state.lastLeftUptimeNanoseconds else { return nil }
            return Double(nowUptimeNanoseconds - left) / 1e9
        }
    }

    /// Called (on the event loop) whenever a page connects or becomes visible: the poller wakes.
    public func onViewerActive(_ wake: @escaping @Sendable () -> Void) {
        state.withLock { $0.wakeActive = wake }
    }

    /// Pushes the scene to every visible page. `json`: `{"type":"state",…}`, sent only when it
    /// differs from the last one pushed.
    public func publish(_ json: String) {
        let targets: [Channel] = state.withLock { state in
            guard state.latest != json else { return [] }
            state.latest = json
            return state.viewers.values.filter(\.visible).map(\.channel)
        }
        for channel in targets { send(json, on: channel) }
    }

    fileprivate func send(_ text: String, on channel: Channel) {
        channel.eventLoop.execute {
            let buffer = channel.allocator.buffer(string: text)
            channel.writeAndFlush(WebSocketFrame(fin: true, opcode: .text, data: buffer), promise: nil)
        }
    }

    fileprivate func added(_ channel: Channel) {
        let (latest, wake) = state.withLock { state in
            state.viewers[ObjectIdentifier(channel)] = Viewer(channel: channel, visible: true)
            state.everConnected = true
            return (state.latest, state.wakeActive)
        }
        send(setupJSON, on: channel)
        if let latest { send(latest, on: channel) }
        wake?()
    }

    fileprivate func removed(_ channel: Channel) {
        state.withLock { state in
            if state.viewers.removeValue(forKey: ObjectIdentifier(channel)) != nil, state.viewers.isEmpty {
                state.lastLeftUptimeNanoseconds = DispatchTime.now().uptimeNanoseconds
            }
        }
    }

    fileprivate func setVisible(_ visible: Bool, _ channel: Channel) {
        let (latest, wake) = state.withLock { state in
            state.viewers[ObjectIdentifier(channel)]?.visible = visible
            return (state.latest, state.wakeActive)
        }
        guard visible else { return }
        if let latest { send(latest, on: channel) }
        wake?()
    }

    fileprivate func perform(_ action: ViewAction, replyingOn channel: Channel) {
        actionQueue.async { [self] in
            let (ok, message) = actionHandler(action)
            struct Reply: Encodable { let type = "reply"; let id: Int; let ok: Bool; let message: String }
            let data = (try? JSONEncoder().encode(Reply(id: action.id, ok: ok, message: message))) ?? Data("{}".utf8)
            send(String(decoding: data, as: UTF8.self), on: channel)
            // The scene as the server now reports it, at once.
            state.withLock { $0.wakeActive }?()
        }
    }

    fileprivate func decide(_ head: HTTPRequestHead) -> ViewAccess.Decision {
        guard let access else { return .refuse(status: 503, reason: "not ready") }
        return access.decide(uri: head.uri, headers: head.headers.map { ($0.name, $0.value) })
    }
}

public struct ViewServerError: Error, CustomStringConvertible {
    public let description: String
    init(_ description: String) { self.description = description }
}

extension ViewAccess.Decision {
    var isAllowed: Bool { if case .allow = self { true } else { false } }
}

/// The page, its assets, and refusals. Only GET and HEAD.
private final class HTTPHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    private let server: ViewServer
    private var head: HTTPRequestHead?

    init(server: ViewServer) { self.server = server }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head): self.head = head
        case .body: break
        case .end:
            guard let head else { return }
            self.head = nil
            respond(context: context, to: head)
        }
    }

    private func respond(context: ChannelHandlerContext, to head: HTTPRequestHead) {
        let decision = server.decide(head)
        guard case .allow(let tokenInURL) = decision else {
            if case .refuse(let status, let reason) = decision {
                return write(context: context, head: head, status: HTTPResponseStatus(statusCode: status), type: "text/plain; charset=utf-8",
                             body: "refused: \(reason)\n", close: true)
            }
            return
        }
        guard head.method == .GET || head.method == .HEAD else {
            return write(context: context, head: head, status: .methodNotAllowed, type: "text/plain; charset=utf-8", body: "GET only\n")
        }
        let path = ViewAccess.path(of: head.uri)
        if tokenInURL, let access = server.access {
            // The cookie from now on, and the token out of the address bar and history.
            let headers = HTTPHeaders([("Location", path), ("Set-Cookie", access.setCookieValue)])
            return write(context: context, head: head, status: .seeOther, type: "text/plain; charset=utf-8", body: "", extra: headers)
        }
        switch path {
        case "/", "/index.html": write(context: context, head: head, status: .ok, type: "text/html; charset=utf-8", body: PageAssets.html)
        case "/view.js": write(context: context, head: head, status: .ok, type: "text/javascript; charset=utf-8", body: PageAssets.script)
        case "/view.css": write(context: context, head: head, status: .ok, type: "text/css; charset=utf-8", body: PageAssets.style)
        case "/ws": write(context: context, head: head, status: .badRequest, type: "text/plain; charset=utf-8", body: "a WebSocket only\n")
        default: write(context: context, head: head, status: .notFound, type: "text/plain; charset=utf-8", body: "not found\n")
        }
    }

    private func write(context: ChannelHandlerContext, head request: HTTPRequestHead, status: HTTPResponseStatus, type: String,
                       body: String, extra: HTTPHeaders = HTTPHeaders(), close: Bool = false) {
        let port = server.access?.port ?? 0
        var headers = extra
        headers.add(name: "Content-Type", value: type)
        headers.add(name: "Content-Length", value: String(body.utf8.count))
        headers.add(name: "Cache-Control", value: "no-store")
        headers.add(name: "X-Content-Type-Options", value: "nosniff")
        headers.add(name: "Referrer-Policy", value: "no-referrer")
        headers.add(name: "X-Frame-Options", value: "DENY")
        // Nothing from anywhere else: the page works offline and loads no one's code.
        headers.add(name: "Content-Security-Policy",
                    value: "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
                        + "connect-src ws://127.0.0.1:\(port) ws://localhost:\(port); frame-ancestors 'none'; base-uri 'none'; form-action 'none'")
        if close { headers.add(name: "Connection", value: "close") }
        let response = HTTPResponseHead(version: request.version, status: status, headers: headers)
        context.write(wrapOutboundOut(.head(response)), promise: nil)
        if request.method != .HEAD, !body.isEmpty {
            context.write(wrapOutboundOut(.body(.byteBuffer(context.channel.allocator.buffer(string: body)))), promise: nil)
        }
        let done = context.writeAndFlush(wrapOutboundOut(.end(nil)))
        if close || !request.isKeepAlive {
            let channel = context.channel
            done.whenComplete { _ in channel.close(promise: nil) }
        }
    }
}

/// One page's socket: `{"type":"visible","visible":false}` while the page is hidden (nothing is
/// pushed to it then), actions as `ViewAction`s.
private final class WebSocketHandler: ChannelInboundHandler {
    typealias InboundIn = WebSocketFrame
    typealias OutboundOut = WebSocketFrame

    private let server: ViewServer
    private var text = ""

    init(server: ViewServer) { self.server = server }

    func handlerAdded(context: ChannelHandlerContext) {
        server.added(context.channel)
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        server.removed(context.channel)
    }

    func channelInactive(context: ChannelHandlerContext) {
        server.removed(context.channel)
        context.fireChannelInactive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let frame = unwrapInboundIn(data)
        switch frame.opcode {
        case .text, .continuation:
            var data = frame.unmaskedData
            text += data.readString(length: data.readableBytes) ?? ""
            guard frame.fin else {
                if text.utf8.count > 1 << 16 { context.close(promise: nil) }
                return
            }
            let message = text
            text = ""
            handle(message, context: context)
        case .ping:
            var data = frame.unmaskedData
            let pong = WebSocketFrame(fin: true, opcode: .pong, data: data.readSlice(length: data.readableBytes) ?? context.channel.allocator.buffer(capacity: 0))
            context.writeAndFlush(wrapOutboundOut(pong), promise: nil)
        case .connectionClose:
            let close = WebSocketFrame(fin: true, opcode: .connectionClose, data: context.channel.allocator.buffer(capacity: 0))
            context.writeAndFlush(wrapOutboundOut(close)).whenComplete { _ in context.close(promise: nil) }
        default:
            break
        }
    }

    private func handle(_ message: String, context: ChannelHandlerContext) {
        struct Kind: Decodable { let type: String?; let visible: Bool? }
        let data = Data(message.utf8)
        if let kind = try? JSONDecoder().decode(Kind.self, from: data), kind.type == "visible" {
            server.setVisible(kind.visible ?? true, context.channel)
        } else if let action = try? JSONDecoder().decode(ViewAction.self, from: data) {
            server.perform(action, replyingOn: context.channel)
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: Error) {
        context.close(promise: nil)
    }
}
