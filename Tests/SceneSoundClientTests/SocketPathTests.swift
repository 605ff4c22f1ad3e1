import SceneSoundClient
import Testing

@Suite struct SocketPathTests {
    @Test func explicitPathWins() throws {
        let path = try SocketPath.resolve(explicit: "/tmp/a", environment: ["SCENESOUND_SOCKET": "/tmp/b", "XDG_RUNTIME_DIR": "/run/u"])
        #expect(path == "/tmp/a")
    }

    @Test func environmentVariableBeforeRuntimeDirectory() throws {
        let path = try SocketPath.resolve(explicit: nil, environment: ["SCENESOUND_SOCKET": "/tmp/b", "XDG_RUNTIME_DIR": "/run/u"])
        #expect(path == "/tmp/b")
    }

    @Test func runtimeDirectoryLast() throws {
        #expect(try SocketPath.resolve(explicit: nil, environment: ["XDG_RUNTIME_DIR": "/run/user/1000"]) == "/run/user/1000/scenesound/socket")
        #expect(try SocketPath.resolve(explicit: "", environment: ["SCENESOUND_SOCKET": "", "XDG_RUNTIME_DIR": "/run/u/"]) == "/run/u/scenesound/socket")
    }

    @Test func nothingSetIsAClearError() {
        #expect(throws: ClientError.noSocketPath) { try SocketPath.resolve(explicit: nil, environment: [:]) }
        #expect(ClientError.noSocketPath.description.contains("--socket"))
        #expect(ClientError.noSocketPath.description.contains("XDG_RUNTIME_DIR"))
    }
}
