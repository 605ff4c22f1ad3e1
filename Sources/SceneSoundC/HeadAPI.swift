import SceneSoundClient
import SceneSoundProtocol

// The user's head pose, shared by every client of the server.

@_cdecl("scenesound_set_head_pose")
public func scenesound_set_head_pose(_ client: OpaquePointer?, _ timestampNanoseconds: UInt64,
                                     _ w: Float, _ x: Float, _ y: Float, _ z: Float,
                                     _ positionMetres: UnsafePointer<Float>?) -> Int32 {
    apiCall { () throws(CFailure) in
        let connection = try Handles.client(client).connection
        let position = positionMetres.map { PositionMetres(x: $0[0], y: $0[1], z: $0[2]) }
        let pose = HeadPose(timestampNanoseconds: timestampNanoseconds,
                            orientation: Quaternion(w: w, x: x, y: y, z: z), position: position)
        try clientCall { () throws(ClientError) in try connection.sendHeadPose(pose) }
    }
}

@_cdecl("scenesound_recenter_head")
public func scenesound_recenter_head(_ client: OpaquePointer?) -> Int32 {
    apiCall { () throws(CFailure) in
        let connection = try Handles.client(client).connection
        try clientCall { () throws(ClientError) in try connection.recenterHead() }
    }
}

@_cdecl("scenesound_set_device_spatial")
public func scenesound_set_device_spatial(_ client: OpaquePointer?, _ spatial: Int32) -> Int32 {
    apiCall { () throws(CFailure) in
        let connection = try Handles.client(client).connection
        guard let spatial = UInt8(exactly: spatial).flatMap(DeviceSpatial.init(rawValue:)) else {
            throw CFailure.invalid("spatial \(spatial) is not one of SCENESOUND_DEVICE_SPATIAL_OFF, _FIXED, _HEAD_TRACKED")
        }
        try clientCall { () throws(ClientError) in try connection.useSpatial(spatial) }
    }
}

@_cdecl("scenesound_set_device_render")
public func scenesound_set_device_render(_ client: OpaquePointer?, _ render: Int32) -> Int32 {
    apiCall { () throws(CFailure) in
        let connection = try Handles.client(client).connection
        guard let render = UInt8(exactly: render).flatMap(DeviceRender.init(rawValue:)) else {
            throw CFailure.invalid("render \(render) is not one of SCENESOUND_DEVICE_RENDER_AUTO, _HEADPHONES, _SPEAKERS")
        }
        try clientCall { () throws(ClientError) in try connection.useRender(render) }
    }
}
