import Foundation
import SceneSoundCapture

// Started by the daemon with `--capture-apps`, with one end of a socket pair as stdin: when
// the daemon dies (however) or stops beating, this puts every captured app back on its sink
// and unloads the daemon's capture sink. See CaptureGuardLink.
exit(CaptureGuard.run(arguments: Array(CommandLine.arguments.dropFirst())))
