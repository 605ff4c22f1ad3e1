import Glibc
import SceneSoundProtocol

// Library-wide functions: version, error texts, memory.

@_cdecl("scenesound_version")
public func scenesound_version() -> UnsafePointer<CChar> {
    cString(libraryVersion)
}

let libraryVersion = SceneSoundRelease.staticVersion

@_cdecl("scenesound_strerror")
public func scenesound_strerror(_ status: Int32) -> UnsafePointer<CChar> {
    cString(staticDescription(of: status))
}

@_cdecl("scenesound_last_error_message")
public func scenesound_last_error_message() -> UnsafePointer<CChar> {
    LastError.current ?? cString("")
}

@_cdecl("scenesound_free")
public func scenesound_free(_ memory: UnsafeMutableRawPointer?) {
    free(memory)
}

/// A string literal's bytes as a C string: the compiler emits literals NUL-terminated and
/// keeps them for the life of the program.
func cString(_ text: StaticString) -> UnsafePointer<CChar> {
    UnsafeRawPointer(text.utf8Start).assumingMemoryBound(to: CChar.self)
}
