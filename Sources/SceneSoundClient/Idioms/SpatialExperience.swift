import SceneSoundProtocol

/// How a sound is placed around the listener: the counterpart of Apple's spatial experiences
/// (`AVAudioPlayer.intendedSpatialExperience`, `AudioServicesPlaySystemSound(_:spatialExperience:)`).
///
/// ```swift
/// player.intendedSpatialExperience = .headTracked(.scene(identifier: "editor"))
/// ```
public enum SpatialExperience: Hashable, Sendable {
    /// World-locked at an anchor and head-tracked: the sound stays where its anchor is while the
    /// head turns (the stream's spatial mode `anchored`).
    case headTracked(Anchoring)
    /// Locked to the head, in the direction of the program's window when the head is neutral:
    /// turning the head does not move it (`head-locked`).
    case fixed
    /// No spatial rendering: plain stereo, bit-exact at unity gain (`off`).
    case bypassed

    /// What a head-tracked sound is anchored to.
    public enum Anchoring: Hashable, Sendable {
        /// The program's own window, which the server finds through `_NET_WM_PID` (the pid of
        /// the connection's peer); straight ahead while the program has no window.
        case automatic
        /// Straight ahead, at the centre of the primary screen, whatever the windows do.
        case front
        /// A scene: `x11:0x<hex>` names an X11 window directly; any other identifier is a scene
        /// bound to a window or placed by `ClientConnection.bindScene` / `placeScene` (straight
        /// ahead while nothing binds it). At most 255 bytes of UTF-8.
        case scene(identifier: String)
    }

    /// The scene `.headTracked(.front)` plays at. Scenes are shared by every client of the
    /// server: this one is left unbound, so it plays straight ahead (SPEC.md section 7).
    public static let frontSceneIdentifier = "scenesound:front"

    /// The stream's spatial mode on the wire.
    public var spatialMode: SpatialMode {
        switch self {
        case .headTracked: .anchored
        case .fixed: .headLocked
        case .bypassed: .off
        }
    }

    /// The stream's scene on the wire: empty means "the program's window, found by pid".
    public var sceneIdentifier: String {
        switch self {
        case .headTracked(.automatic), .fixed, .bypassed: ""
        case .headTracked(.front): Self.frontSceneIdentifier
        case .headTracked(.scene(let identifier)): identifier
        }
    }
}

extension StreamOpen {
    /// A stream placed as `spatialExperience` says.
    public init(kind: StreamKind, format: AudioFormat, spatialExperience: SpatialExperience,
                loop: Bool = false, volumeDecibels: Float = 0) {
        self.init(kind: kind, format: format, spatialMode: spatialExperience.spatialMode, loop: loop,
                  volumeDecibels: volumeDecibels, sceneID: spatialExperience.sceneIdentifier)
    }
}

extension SamplePlay {
    /// A sample play placed as `spatialExperience` says.
    public init(name: String, kind: StreamKind, spatialExperience: SpatialExperience, volumeDecibels: Float = 0) {
        self.init(name: name, kind: kind, spatialMode: spatialExperience.spatialMode, volumeDecibels: volumeDecibels,
                  sceneID: spatialExperience.sceneIdentifier)
    }
}
