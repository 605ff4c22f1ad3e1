import Foundation
import SceneSoundProtocol
import SceneSoundSOFA
@testable import SceneSoundServer
import Synchronization
import Testing

/// HRTF_USE refusals on a session, before anything is loaded: the set in use stays. (A switch
/// that loads runs on a worker thread and is shown end to end in HRTFSwitchDaemonTests.)
@Suite struct HRTFSessionTests {
    static func message(_ reply: Message?) -> String {
        if case .error(let error)? = reply { return error.message }
        return "no error"
    }

    @Test func aServerWithoutALoaderRefusesAndMissingOrRelativeFilesAreRefusedNamingThem() throws {
        let plain = InProcessServer()
        let client = try plain.connect()
        let unsupported = try client.request(.hrtfUse(HRTFUse(path: SOFAFile.defaultPath)))
        #expect(errorCode(unsupported) == .notPermitted, "\(Self.message(unsupported))")

        let loads = Mutex(0)
        let server = InProcessServer { configuration in
            configuration.hrtfLoader = { _ in
                loads.withLock { $0 += 1 }
                throw CancellationError()
            }
        }
        let session = try server.connect()
        let missing = "/nonexistent/FABIAN.sofa"
        let refused = try session.request(.hrtfUse(HRTFUse(path: missing)))
        #expect(errorCode(refused) == .invalidArgument)
        #expect(Self.message(refused) == "\(missing): no such readable file (accepted: an AES69 SOFA file)")
        let relative = try session.request(.hrtfUse(HRTFUse(path: "FABIAN.sofa")))
        #expect(errorCode(relative) == .invalidArgument)
        #expect(Self.message(relative).contains("'FABIAN.sofa' is not absolute"))
        #expect(loads.withLock { $0 } == 0)
        #expect(try server.status().hrtf.path == SOFAFile.defaultPath)
    }
}
