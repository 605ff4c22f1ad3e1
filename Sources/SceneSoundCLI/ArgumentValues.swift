import ArgumentParser
import SceneSoundProtocol

// Values that command-line options take, each validated with a message naming what is accepted.

extension SpatialMode: ExpressibleByArgument {
    /// The names used on the command line.
    static let argumentNames: [(String, SpatialMode)] = [("anchored", .anchored), ("head-locked", .headLocked), ("off", .off)]

    public init?(argument: String) {
        guard let mode = Self.argumentNames.first(where: { $0.0 == argument })?.1 else { return nil }
        self = mode
    }

    public static var allValueStrings: [String] { argumentNames.map(\.0) }

    public var defaultValueDescription: String { Self.argumentNames.first { $0.1 == self }!.0 }
}

extension SampleFormat {
    static let argumentNames: [(String, SampleFormat)] = [("s16le", .s16le), ("s32le", .s32le), ("f32le", .f32le)]

    init?(argumentName: String) {
        guard let format = Self.argumentNames.first(where: { $0.0 == argumentName })?.1 else { return nil }
        self = format
    }
}

/// Checks a gain in dB against the protocol's range.
func validateVolume(_ decibels: Float, option: String = "--volume") throws {
    guard decibels.isFinite, ProtocolLimits.volumeDecibelsRange.contains(decibels) else {
        throw ValidationError("\(option) \(decibels) is out of range (accepted: -200 to 24 dB)")
    }
}

/// Checks a scene id: at most 255 bytes, no NUL, `x11:` only as `x11:0x<hex>`.
func validateSceneID(_ sceneID: String, option: String) throws {
    do { try SceneID.validate(sceneID, field: option, allowEmpty: false) } catch {
        throw ValidationError(error.detail)
    }
}
