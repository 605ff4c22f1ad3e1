import SceneSoundClient
import SceneSoundProtocol

// Scenes: binding to windows, fixed places, and where the server puts them.

@_cdecl("scenesound_scene_bind_window")
public func scenesound_scene_bind_window(_ client: OpaquePointer?, _ sceneID: UnsafePointer<CChar>?, _ windowID: UInt32) -> Int32 {
    apiCall { () throws(CFailure) in
        let connection = try Handles.client(client).connection
        let scene = try CArguments.sceneID(sceneID, allowEmpty: false)
        guard windowID != 0 else { throw .invalid("window_id is 0 (X11's None)") }
        try clientCall { () throws(ClientError) in try connection.bindScene(scene, toWindow: windowID) }
    }
}

@_cdecl("scenesound_scene_place")
public func scenesound_scene_place(_ client: OpaquePointer?, _ sceneID: UnsafePointer<CChar>?,
                                   _ azimuthDegrees: Float, _ elevationDegrees: Float, _ distanceMetres: Float) -> Int32 {
    apiCall { () throws(CFailure) in
        let connection = try Handles.client(client).connection
        let scene = try CArguments.sceneID(sceneID, allowEmpty: false)
        let position = ScenePosition(azimuthDegrees: azimuthDegrees, elevationDegrees: elevationDegrees,
                                     distanceMetres: distanceMetres)
        try clientCall { () throws(ClientError) in try connection.placeScene(scene, at: position) }
    }
}

@_cdecl("scenesound_scene_unbind")
public func scenesound_scene_unbind(_ client: OpaquePointer?, _ sceneID: UnsafePointer<CChar>?) -> Int32 {
    apiCall { () throws(CFailure) in
        let connection = try Handles.client(client).connection
        let scene = try CArguments.sceneID(sceneID, allowEmpty: false)
        try clientCall { () throws(ClientError) in try connection.unbindScene(scene) }
    }
}

@_cdecl("scenesound_scene_get_position")
public func scenesound_scene_get_position(_ client: OpaquePointer?, _ sceneID: UnsafePointer<CChar>?,
                                          _ outAzimuthDegrees: UnsafeMutablePointer<Float>?,
                                          _ outElevationDegrees: UnsafeMutablePointer<Float>?,
                                          _ outDistanceMetres: UnsafeMutablePointer<Float>?) -> Int32 {
    apiCall { () throws(CFailure) in
        let connection = try Handles.client(client).connection
        let scene = try CArguments.sceneID(sceneID, allowEmpty: false)
        let scenes = try clientCall { () throws(ClientError) in try connection.listScenes() }
        guard let entry = scenes.first(where: { $0.sceneID == scene }) else {
            throw CFailure(StatusCode.unknownScene, "the server lists no scene \"\(scene)\"")
        }
        outAzimuthDegrees?.pointee = entry.position.azimuthDegrees
        outElevationDegrees?.pointee = entry.position.elevationDegrees
        outDistanceMetres?.pointee = entry.position.distanceMetres
    }
}
