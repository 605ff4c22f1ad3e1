import Foundation
import SceneSoundTestSupport

/// The geometry oracle: `xwininfo -id W`. Its "Absolute upper-left" is the outer corner of the
/// window's border and Width/Height exclude the border, so the client area starts one border
/// width further in.
struct XWinInfo: Equatable, CustomStringConvertible {
    var absoluteX: Int
    var absoluteY: Int
    var width: Int
    var height: Int
    var borderWidth: Int

    static func read(window: UInt32, display: String) throws -> XWinInfo {
        let text = try runTool("/usr/bin/xwininfo", ["-id", String(window)], display: display)
        func field(_ label: String) -> Int? {
            for line in text.split(separator: "\n") {
                let trimmed = line.trimmingCharacters(in: .whitespaces)
                if trimmed.hasPrefix(label + ":") {
                    return Int(trimmed.dropFirst(label.count + 1).trimmingCharacters(in: .whitespaces))
                }
            }
            return nil
        }
        guard let x = field("Absolute upper-left X"), let y = field("Absolute upper-left Y"),
              let width = field("Width"), let height = field("Height"), let border = field("Border width") else {
            throw ToolFailure(command: "xwininfo -id \(window)", status: 0, output: text)
        }
        return XWinInfo(absoluteX: x, absoluteY: y, width: width, height: height, borderWidth: border)
    }

    var centreX: Double { Double(absoluteX + borderWidth) + Double(width) / 2 }
    var centreY: Double { Double(absoluteY + borderWidth) + Double(height) / 2 }

    var description: String { "\(width)x\(height)+\(absoluteX)+\(absoluteY) border \(borderWidth)" }
}
