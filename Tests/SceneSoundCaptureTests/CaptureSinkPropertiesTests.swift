@testable import SceneSoundCapture
import Testing

/// The capture sink's module arguments, and the PipeWire versions whose graph needs the sink to
/// run at the node's quantum (the short sounds on PipeWire 1.4, docs/DESKTOPS.md).
@Suite struct CaptureSinkPropertiesTests {
    @Test func pipeWiresVersionIsReadFromItsPulseServersName() {
        #expect(CaptureSinkProperties.pipeWireVersion(serverName: "PulseAudio (on PipeWire 1.4.2)") == [1, 4, 2])
        #expect(CaptureSinkProperties.pipeWireVersion(serverName: "PulseAudio (on PipeWire 0.3.65)") == [0, 3, 65])
        #expect(CaptureSinkProperties.pipeWireVersion(serverName: "pulseaudio") == nil)
        #expect(CaptureSinkProperties.pipeWireVersion(serverName: "PulseAudio (on PipeWire )") == nil)
        #expect(CaptureSinkProperties.pipeWireVersion(serverName: nil) == nil)
    }

    @Test func aPassiveSinkHoldsAppsBeforePipeWire0368Only() {
        #expect(CaptureSinkProperties.passiveSinkHoldsApps(pipeWireVersion: [0, 3, 65]))
        #expect(CaptureSinkProperties.passiveSinkHoldsApps(pipeWireVersion: [0, 3, 67]))
        #expect(!CaptureSinkProperties.passiveSinkHoldsApps(pipeWireVersion: [0, 3, 68]))
        #expect(!CaptureSinkProperties.passiveSinkHoldsApps(pipeWireVersion: [1, 4, 2]))
        #expect(CaptureSinkProperties.passiveSinkHoldsApps(pipeWireVersion: nil), "unknown: as today")
    }

    @Test func theSinkAsksForTheNodesQuantumOnlyWhenTold() {
        let plain = CaptureSinkProperties.nullSinkArguments(session: "s", ownerPID: 1, previousDefaultSink: "out", rateHz: 48_000)
        #expect(!plain.contains("node.passive") && !plain.contains("force-quantum"))
        let passive = CaptureSinkProperties.nullSinkArguments(session: "s", ownerPID: 1, previousDefaultSink: "out", rateHz: 48_000,
                                                              isPassive: true)
        #expect(passive.contains("node.passive=true") && !passive.contains("force-quantum"))
        let forced = CaptureSinkProperties.nullSinkArguments(session: "s", ownerPID: 1, previousDefaultSink: "out", rateHz: 48_000,
                                                             isPassive: true, forcedQuantumFrames: 256)
        #expect(forced.contains("node.force-quantum=256"))
        #expect(forced.hasPrefix("sink_name=scenesound_capture sink_properties=\""))
    }
}
