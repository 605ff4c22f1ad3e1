import SceneSoundDSP
#if canImport(Glibc)
import Glibc
#endif

/// Where a source on the ambisonic bus sounds from: each ear's delay and level for a direction,
/// and the placement kept while the source and the head stay put.
extension SpatialRenderer {
    /// Each ear's onset delay (less the decoder's share of the ITD) and level correction on the
    /// bus for a head-relative direction.
    /// Nearer than the set's measurement distance, each ear's delay grows and its level
    /// follows the near field's (NearField.broadbandGain), as a voice's: the bus has one field for all
    /// its sources, so no per-source parallax or spectral shape, but no jump in level or ITD
    /// when a source moves between the paths.
    func busCues(on stage: BinauralStage, azimuthDegrees: Double, elevationDegrees: Double,
                         distanceMetres: Double) -> BusCues {
        let hrtf = stage.hrtf, busDecoder = stage.busDecoder
        let hood = hrtf.neighbourhood(azimuthDegrees: azimuthDegrees, elevationDegrees: elevationDegrees)
        let onsets = hrtf.delays(hood)
        let corrections = busDecoder.earDelays(hood)
        var cues = BusCues(delays: (onsets.left - corrections.left, onsets.right - corrections.right),
                           earLevels: busDecoder.earLevels(hood))
        if let field = stage.voiceMix.nearField, distanceMetres < field.measurementDistanceMetres {
            let ears = field.ears(of: SphericalPosition(azimuthDegrees: azimuthDegrees, elevationDegrees: elevationDegrees,
                                                        distanceMetres: max(distanceMetres, NearField.minimumDistanceMetres)).cartesian)
            cues.delays.left += ears.delayCorrectionSamples.left
            cues.delays.right += ears.delayCorrectionSamples.right
            cues.earLevels.left *= field.broadbandGain(incidenceDegrees: ears.incidenceDegrees.left, distanceMetres: distanceMetres)
            cues.earLevels.right *= field.broadbandGain(incidenceDegrees: ears.incidenceDegrees.right, distanceMetres: distanceMetres)
        }
        return cues
    }


    /// How far the head may turn before a source wholly on the bus looks its direction and
    /// cues up again: as far as a voice's filters may lag (BinauralVoice's threshold, at most
    /// 12 µs of ITD), which at 90°/s spares two blocks in three. The bus's gains and delays
    /// still glide across the block in which they change.
    static let busPlacementThresholdDegrees = 1.0
    static let busPlacementThresholdCosine = cos(busPlacementThresholdDegrees / 2 * .pi / 180)

    /// A channel's placement for a source wholly on the bus: the stored one while the channel
    /// and the head stay where they were and the head has turned less than the threshold
    /// since (|q₀·q₁| = cos(angle / 2)), else looked up again and stored.
    func busPlacement(_ voices: SourceVoices, on stage: BinauralStage, channel c: Int, position: Vector3,
                              anchored: Bool, pose: HeadPose) -> BusPlacement {
        let stored = voices.busPlacements + c
        if stored.pointee.isValid && stored.pointee.position == position && stored.pointee.anchored == anchored {
            if !anchored { return stored.pointee }
            let (q0, q1) = (stored.pointee.orientation, pose.orientation)
            let cosine: Double = abs(q0.w * q1.w + q0.x * q1.x + q0.y * q1.y + q0.z * q1.z)
            if stored.pointee.headPosition == pose.positionMetres && cosine >= Self.busPlacementThresholdCosine {
                return stored.pointee
            }
        }
        let relative = anchored ? pose.relative(position) : SphericalPosition(cartesian: position)
        stored.pointee = BusPlacement(position: position, anchored: anchored, headPosition: pose.positionMetres,
                                      orientation: pose.orientation, relative: relative,
                                      cues: busCues(on: stage, azimuthDegrees: relative.azimuthDegrees,
                                                    elevationDegrees: relative.elevationDegrees,
                                                    distanceMetres: relative.distanceMetres),
                                      isValid: true)
        return stored.pointee
    }
}
