import Foundation
import SceneSoundDSP
import SceneSoundEngine
import SceneSoundMedia
import SceneSoundSOFA

/// The real KEMAR set, prepared once for all tests in this process (through a private cache).
enum KEMAR {
    static let rateHz = 48000.0
    static let file: SOFAFile = try! SOFAFile.load(path: SOFAFile.defaultPath)
    static let rawMeasurements: [HRIRMeasurement] = try! file.resampled(to: rateHz)
    /// Diffuse-field equalized, as the daemon prepares the set: the reference cues come from
    /// these, the same responses the renderer's filters are made from.
    static let measurements: [HRIRMeasurement] = DiffuseFieldEqualization.equalize(rawMeasurements, sampleRateHz: rateHz)
    static let set: HRTFSet = try! HRTFPreparation.prepare(measurements, sampleRateHz: rateHz, timing: rawMeasurements)

    static func measurement(azimuthDegrees: Double, elevationDegrees: Double = 0,
                            among measurements: [HRIRMeasurement] = KEMAR.measurements) -> HRIRMeasurement {
        var az = azimuthDegrees.truncatingRemainder(dividingBy: 360)
        if az < 0 { az += 360 }
        return measurements.first { abs($0.azimuthDegrees - az) < 0.01 && abs($0.elevationDegrees - elevationDegrees) < 0.01 }!
    }

    /// The set's own cues for a direction: noise convolved with the measured responses, the
    /// level difference through the equalized ones (as the set is prepared), the time
    /// difference through the raw ones (the preparation keeps it; `among` other measurements
    /// take both from those).
    static func referenceCues(azimuthDegrees: Double, elevationDegrees: Double = 0, noise: [Float],
                              among measurements: [HRIRMeasurement]? = nil) -> BinauralCues {
        let m = measurement(azimuthDegrees: azimuthDegrees, elevationDegrees: elevationDegrees,
                            among: measurements ?? KEMAR.measurements)
        let t = measurement(azimuthDegrees: azimuthDegrees, elevationDegrees: elevationDegrees,
                            among: measurements ?? rawMeasurements)
        return BinauralCues(
            interauralTimeDifferenceSeconds: CueAnalysis.itdSeconds(left: convolve(noise, t.left), right: convolve(noise, t.right),
                                                                    sampleRateHz: rateHz),
            interauralLevelDifferenceDecibels: CueAnalysis.ildDecibels(left: convolve(noise, m.left), right: convolve(noise, m.right)))
    }

    /// x convolved with h, x's length kept (in the frequency domain, in double precision: the
    /// same result as the direct sum, far sooner in a debug build).
    static func convolve(_ x: [Float], _ h: [Float]) -> [Float] {
        let n = FFT.size(atLeast: x.count + h.count)
        let fft = FFT(size: n)
        var xr = [Double](repeating: 0, count: n), xi = xr, hr = xr, hi = xr
        for (t, v) in x.enumerated() { xr[t] = Double(v) }
        for (t, v) in h.enumerated() { hr[t] = Double(v) }
        fft.transform(real: &xr, imag: &xi)
        fft.transform(real: &hr, imag: &hi)
        for k in 0..<n {
            (xr[k], xi[k]) = (xr[k] * hr[k] - xi[k] * hi[k], xr[k] * hi[k] + xi[k] * hr[k])
        }
        fft.transform(real: &xr, imag: &xi, inverse: true)
        return (0..<x.count).map { Float(xr[$0]) }
    }
}

/// Renders mono input through the engine with a per-block head pose and source position.
struct OfflineRender {
    var configuration = EngineConfiguration()
    var hrtf: HRTFSet = KEMAR.set
    /// The bus decoder (when nil, the set's default design, made once per set for the whole
    /// test process: a design costs more than most renders).
    var busFilters: AmbisonicDecodeFilters?

    private static let designLock = NSLock()
    nonisolated(unsafe) private static var designs:
        [ObjectIdentifier: (set: HRTFSet, filters: AmbisonicDecodeFilters, diffuseField: [Float])] = [:]

    /// The set's bus decoder and diffuse-field filter, made once per set for the whole test
    /// process (each costs more than most renders; a room's render would make the filter anew).
    static func sharedDesign(for hrtf: HRTFSet) -> (filters: AmbisonicDecodeFilters, diffuseField: [Float]) {
        designLock.lock()
        defer { designLock.unlock() }
        if let design = designs[ObjectIdentifier(hrtf)] { return (design.filters, design.diffuseField) }
        let design = (set: hrtf, filters: AmbisonicDecodeFilters.design(from: hrtf),
                      diffuseField: DiffuseFieldResponse.filter(of: hrtf))
        designs[ObjectIdentifier(hrtf)] = design  // the set kept alive: its identity stays its own
        return (design.filters, design.diffuseField)
    }

    /// `place(t)` gives the source position and head pose at time t (seconds, block end).
    func render(_ input: [Float], mode: SpatialMode = .anchored,
                place: (Double) -> (position: Vector3, pose: HeadPose)) -> (left: [Float], right: [Float]) {
        let shared = Self.sharedDesign(for: hrtf)
        let renderer = SpatialRenderer(hrtf: hrtf, configuration: configuration, maximumSources: 1,
                                       busFilters: busFilters ?? shared.filters, diffuseField: shared.diffuseField)
        // Rendering as fast as it goes, a busy machine would look like an overload and move
        // the source to the bus mid-render: the paths follow the cap alone.
        renderer.governor.simulatedLoadFraction = 0
        let initial = place(0)
        let source = RenderSource(input: BufferInput(channels: [input]), channelCount: 1, mode: mode,
                                  channelPositions: [initial.position], gain: 1, hrtf: hrtf,
                                  maximumFrames: configuration.blockFrames)
        renderer.add(source)
        renderer.setHeadPose(initial.pose, glide: false)
        let block = configuration.blockFrames
        var left: [Float] = [], right: [Float] = []
        var out = [Float](repeating: 0, count: block * 2)
        var frames = 0
        let latency = renderer.latencyFrames
        while frames < input.count + latency {
            frames += block
            let now = place(Double(frames) / configuration.sampleRateHz)
            source.channelPositions[0] = now.position
            renderer.setHeadPose(now.pose)
            renderer.render(into: &out)
            for n in 0..<block { left.append(out[2 * n]); right.append(out[2 * n + 1]) }
        }
        return (Array(left[latency..<(latency + input.count)]), Array(right[latency..<(latency + input.count)]))
    }

    /// At the set's measurement distance by default: there the set's own cues are the reference.
    func renderStatic(_ input: [Float], azimuthDegrees: Double, elevationDegrees: Double = 0,
                      distanceMetres: Double = KEMAR.set.measurementDistanceMetres,
                      headYawDegrees: Double = 0) -> (left: [Float], right: [Float]) {
        render(input) { _ in
            (SphericalPosition(azimuthDegrees: azimuthDegrees, elevationDegrees: elevationDegrees,
                               distanceMetres: distanceMetres).cartesian,
             HeadPose(orientation: Quaternion(yawDegrees: headYawDegrees)))
        }
    }
}
