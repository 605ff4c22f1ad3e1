import CSystemd

/// An object exported with `sd_bus_add_object` (one callback for every message to its path; no
/// vtable, whose macros Swift cannot use): the caller checked, the arguments checked against the
/// method's signature, the handler's values or error sent back.
final class ExportedObject: Sendable {
    let interface: String
    let methods: [String: DBusMethod]
    let allowedCaller: @Sendable () -> String?

    init(interface: String, methods: [DBusMethod], allowedCaller: @escaping @Sendable () -> String?) {
        self.interface = interface
        self.methods = Dictionary(methods.map { ($0.name, $0) }) { first, _ in first }
        self.allowedCaller = allowedCaller
    }

    /// 1: answered; 0: not ours (sd-bus answers UnknownMethod / UnknownObject).
    func handle(_ message: OpaquePointer) -> Int32 {
        var type: UInt8 = 0
        guard sd_bus_message_get_type(message, &type) >= 0, type == UInt8(SD_BUS_MESSAGE_METHOD_CALL) else { return 0 }
        let member = sd_bus_message_get_member(message).map { String(cString: $0) } ?? ""
        let messageInterface = sd_bus_message_get_interface(message).map { String(cString: $0) }
        if messageInterface == "org.freedesktop.DBus.Introspectable" && member == "Introspect" {
            reply(to: message, with: .success([.string(introspection)]))
            return 1
        }
        // A call naming no interface means any interface that has the member (the D-Bus spec).
        guard messageInterface == nil || messageInterface == interface, let method = methods[member] else { return 0 }
        let sender = sd_bus_message_get_sender(message).map { String(cString: $0) } ?? ""
        let allowed = allowedCaller()
        guard allowed == sender else {
            reply(to: message, with: .failure(.accessDenied("\(interface).\(member) answers only \(allowed ?? "its one peer (absent now)"), not \(sender)")))
            return 1
        }
        guard sd_bus_message_has_signature(message, method.inputSignature) > 0 else {
            reply(to: message, with: .failure(.invalidArguments("\(interface).\(member) takes (\(method.inputSignature))")))
            return 1
        }
        let result: Result<[DBusValue], DBusError>
        do {
            let arguments = try DBusMessageCoding.readAll(message)
            result = method.handler(DBusMethodCall(sender: sender,
                                                   path: sd_bus_message_get_path(message).map { String(cString: $0) } ?? "",
                                                   member: member, arguments: arguments))
        } catch {
            result = .failure(error)
        }
        reply(to: message, with: result)
        return 1
    }

    private func reply(to call: OpaquePointer, with result: Result<[DBusValue], DBusError>) {
        switch result {
        case .success(let values):
            var reply: OpaquePointer?
            guard sd_bus_message_new_method_return(call, &reply) >= 0, let reply else { return }
            defer { sd_bus_message_unref(reply) }
            do {
                try DBusMessageCoding.append(values, to: reply)
            } catch {
                sendError(to: call, error)
                return
            }
            sd_bus_send(nil, reply, nil)
        case .failure(let error):
            sendError(to: call, error)
        }
    }

    private func sendError(to call: OpaquePointer, _ error: DBusError) {
        var busError = sd_bus_error()
        error.name.withCString { name in
            error.message.withCString { text in
                // sd_bus_error_set copies both strings.
                _ = sd_bus_error_set(&busError, name, text)
            }
        }
        defer { sd_bus_error_free(&busError) }
        sd_bus_reply_method_error(call, &busError)
    }

    private var introspection: String {
        var xml = """
        <!DOCTYPE node PUBLIC "-//freedesktop//DTD D-BUS Object Introspection 1.0//EN"
         "http://www.freedesktop.org/standards/dbus/1.0/introspect.dtd">
        <node>
         <interface name="org.freedesktop.DBus.Introspectable">
          <method name="Introspect"><arg name="xml_data" type="s" direction="out"/></method>
         </interface>
         <interface name="\(interface)">

        """
        for method in methods.values.sorted(by: { $0.name < $1.name }) {
            xml += "  <method name=\"\(method.name)\">"
            for (index, type) in Self.completeTypes(method.inputSignature).enumerated() {
                xml += "<arg name=\"argument\(index)\" type=\"\(type)\" direction=\"in\"/>"
            }
            for (index, type) in Self.completeTypes(method.outputSignature).enumerated() {
                xml += "<arg name=\"result\(index)\" type=\"\(type)\" direction=\"out\"/>"
            }
            xml += "</method>\n"
        }
        return xml + " </interface>\n</node>\n"
    }

    /// A signature of basic types split into its types ("si" → ["s", "i"]); containers stay whole
    /// only for the simple "a" + basic case, enough for introspection of these methods.
    private static func completeTypes(_ signature: String) -> [String] {
        var types: [String] = []
        var pending = ""
        for character in signature {
            pending.append(character)
            if character != "a" {
                types.append(pending)
                pending = ""
            }
        }
        return types
    }
}
