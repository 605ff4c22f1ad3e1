import Foundation
import SceneSoundPulse
import SceneSoundTestSupport

/// The PulseOutput's event log (the shared one of SceneSoundTestSupport).
typealias EventLog = SceneSoundTestSupport.EventLog<PulseOutput.Event>

extension PulseOutput.Event {
    var isConnected: Bool { if case .connected = self { true } else { false } }
    var isDisconnected: Bool { if case .disconnected = self { true } else { false } }
    var isReconnecting: Bool { if case .reconnecting = self { true } else { false } }
    var failureMessage: String? { if case .failed(let message) = self { message } else { nil } }
}
