/// The page, its style and its script, compiled into the program from `Page/` by SwiftPM
/// (`embedInCode`): an installed scenesound serves them with no files beside it.
enum PageAssets {
    static let html = String(decoding: PackageResources.index_html, as: UTF8.self)
    static let style = String(decoding: PackageResources.view_css, as: UTF8.self)
    static let script = String(decoding: PackageResources.view_js, as: UTF8.self)
}
