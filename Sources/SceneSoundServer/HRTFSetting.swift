import Foundation
import NIOCore
import SceneSoundDSP
import SceneSoundEngine
import SceneSoundProtocol

/// An HRTF set ready for the engine: prepared at the engine's rate, and the bus decoder
/// designed from it (nil: designed when the stage is built).
public struct PreparedHRTF: @unchecked Sendable {  // immutable values, handed over once
    public var set: HRTFSet
    public var busFilters: AmbisonicDecodeFilters?

    public init(set: HRTFSet, busFilters: AmbisonicDecodeFilters?) {
        self.set = set
        self.busFilters = busFilters
    }
}

/// The HRTF set in use (for status) and switching it live (HRTF_USE). The file is loaded,
/// equalized and prepared, and its engine stage built, on a worker thread; back on the event
/// loop every stream the engine holds gets voices for the new set, and the switch goes to the
/// render thread through the command queue, which crossfades to it. A file that fails leaves
/// the set in use as it was. One switch at a time. Event-loop confined.
final class HRTFSetting {
    private let engine: Engine
    private let commands: EngineCommandQueue
    private let engineStreams: EngineStreams
    private let loader: (@Sendable (String) throws -> PreparedHRTF)?
    private let chosen: (@Sendable (String) -> Void)?
    private(set) var path: String
    private var set: HRTFSet
    private var loading: String?

    init(engine: Engine, path: String, commands: EngineCommandQueue, engineStreams: EngineStreams,
         loader: (@Sendable (String) throws -> PreparedHRTF)?, chosen: (@Sendable (String) -> Void)?) {
        self.engine = engine
        self.path = path
        self.commands = commands
        self.engineStreams = engineStreams
        self.loader = loader
        self.chosen = chosen
        set = engine.hrtf
    }

    var status: StatusDocument.HRTF {
        var status = StatusDocument.HRTF(path: path, measurements: set.measurementCount, filterTaps: set.filterTaps,
                                         rateHz: set.sampleRateHz)
        if set.measurementDistanceMetres.isFinite { status.measurementDistanceMetres = set.measurementDistanceMetres }
        return status
    }

    /// Switches to the set at `path` (absolute). A request that cannot start throws at once;
    /// otherwise `completion` is called on `eventLoop` once the switch is queued (or the file
    /// failed to load). `keepAsDefault`: the daemon is told (`chosen`), to start with it next
    /// time; a set switched in for an output device that remembers it is not.
    func use(path: String, on eventLoop: EventLoop, keepAsDefault: Bool = true,
             completion: @escaping (Result<Void, ProtocolError>) -> Void) throws(ProtocolError) {
        guard let loader else {
            throw ProtocolError(.notPermitted, "this server cannot switch its HRTF set")
        }
        if let loading {
            throw ProtocolError(.limitExceeded, "the HRTF set \(loading) is still being loaded; try again when it is in use")
        }
        guard FileManager.default.isReadableFile(atPath: path) else {
            throw ProtocolError(.invalidArgument, "\(path): no such readable file (accepted: an AES69 SOFA file)")
        }
        loading = path
        let configuration = engine.configuration
        let work = Work(loader: loader, configuration: configuration, path: path)
        let finish = NIOLoopBound(completion, eventLoop: eventLoop)
        let setting = NIOLoopBound(self, eventLoop: eventLoop)
        DispatchQueue.global(qos: .userInitiated).async {
            let result = work.run()
            eventLoop.execute {
                finish.value(setting.value.finish(path: path, keepAsDefault: keepAsDefault, result.value))
            }
        }
    }

    /// Loads and builds off the event loop.
    private struct Work: @unchecked Sendable {
        let loader: @Sendable (String) throws -> PreparedHRTF
        let configuration: EngineConfiguration
        let path: String

        func run() -> Outcome {
            do {
                let prepared = try loader(path)
                guard prepared.set.sampleRateHz == configuration.sampleRateHz else {
                    return Outcome(value: .failure(ProtocolError(.invalidArgument,
                        "\(path): prepared at \(prepared.set.sampleRateHz) Hz, not the engine's \(configuration.sampleRateHz) Hz")))
                }
                return Outcome(value: .success(BinauralStage(hrtf: prepared.set, configuration: configuration,
                                                             busFilters: prepared.busFilters)))
            } catch let error as ProtocolError {
                return Outcome(value: .failure(error))
            } catch {
                return Outcome(value: .failure(ProtocolError(.invalidArgument, "\(error)")))
            }
        }
    }

    private struct Outcome: @unchecked Sendable {  // the stage is handed over once
        let value: Result<BinauralStage, ProtocolError>
    }

    private func finish(path: String, keepAsDefault: Bool, _ result: Result<BinauralStage, ProtocolError>) -> Result<Void, ProtocolError> {
        loading = nil
        switch result {
        case .failure(let error):
            return .failure(error)
        case .success(let stage):
            // Every stream added, and every one whose addStream is queued, gets voices for the
            // new set; streams made from now on are made for it (and wait for the crossfade).
            let change = HRTFSwitch(stage: stage, streams: Array(engineStreams.live.values),
                                    blockFrames: engine.configuration.blockFrames)
            engineStreams.hrtf = stage.hrtf
            set = stage.hrtf
            self.path = path
            commands.push(.switchHRTF(change))
            commands.workArrived()
            if keepAsDefault { chosen?(path) }
            return .success(())
        }
    }
}
