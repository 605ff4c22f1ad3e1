import Foundation
import SceneSoundDSP
import SceneSoundEngine
import SceneSoundProtocol

/// AutoEQ `ParametricEQ.txt` files, read and built for the engine's rate. Errors are one line
/// naming the file and, for a malformed one, its line and what it should have been.
public enum HeadphoneEQFile {
    public static func load(path: String, sampleRateHz: Double) throws(ProtocolError) -> HeadphoneEQFilter {
        let text: String
        do {
            text = try String(contentsOfFile: path, encoding: .utf8)
        } catch {
            throw ProtocolError(.invalidArgument, "\(path): cannot read the headphone EQ file (\((error as NSError).localizedDescription))")
        }
        do {
            return try HeadphoneEQFilter(try ParametricEQ(parsing: text), sampleRateHz: sampleRateHz, sourcePath: path)
        } catch {
            throw ProtocolError(.invalidArgument, "\(path): \(error.description)")
        }
    }
}

/// The listener's headphone equalization: which one is in use (for status) and switching it
/// (HEADPHONE_EQ_USE, the daemon's `--headphone-eq`). The file is read and its filters built
/// here, off the render thread, which gets them through the command queue and fades to them;
/// a file that fails leaves the one in use as it was. Event-loop confined.
final class HeadphoneEQSetting {
    private let commands: EngineCommandQueue
    private let sampleRateHz: Double
    /// The one the engine was last told to use.
    private(set) var inUse: HeadphoneEQFilter?

    init(commands: EngineCommandQueue, sampleRateHz: Double) {
        self.commands = commands
        self.sampleRateHz = sampleRateHz
    }

    /// `path` nil or empty: no equalization.
    func use(path: String?) throws(ProtocolError) {
        let filter: HeadphoneEQFilter?
        if let path, !path.isEmpty {
            filter = try HeadphoneEQFile.load(path: path, sampleRateHz: sampleRateHz)
        } else {
            filter = nil
        }
        use(filter)
    }

    func use(_ filter: HeadphoneEQFilter?) {
        inUse = filter
        commands.push(.setHeadphoneEQ(filter))
    }

    var status: StatusDocument.HeadphoneEQ? {
        inUse.map { .init(path: $0.sourcePath, preampDecibels: $0.parametricEQ.preampDecibels,
                          filters: $0.parametricEQ.filters.count) }
    }
}
