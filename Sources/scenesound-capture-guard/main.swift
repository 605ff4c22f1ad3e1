import Foundation
import SceneSoundCapture
import SceneSoundCaptureGraph

// Started by the daemon with `--capture-apps`, with one end of a socket pair as stdin: when
// the daemon dies (however) or stops beating, this puts every captured app back on its sink
// and unloads the daemon's capture sink (a hung daemon is also disconnected from PipeWire).
// See CaptureGuardLink. The installed packages run the daemon's own binary under this name.
exit(CaptureGuard.run(arguments: Array(CommandLine.arguments.dropFirst()), disconnectHungDaemon: HungDaemonDisconnect.run))
