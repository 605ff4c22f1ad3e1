/// The fallbacks the Sound Naming and Sound Theme specs ask for, most specific first.
public enum LookupVariants {
    /// `dialog-warning-foo` → `dialog-warning-foo`, `dialog-warning`, `dialog`: a name is
    /// made less specific by dropping its last dash-separated part.
    public static func names(for name: String) -> [String] {
        var variants = [name]
        var current = Substring(name)
        while let dash = current.lastIndex(of: "-") {
            current = current[..<dash]
            if current.isEmpty { break }
            variants.append(String(current))
        }
        return variants
    }

    /// The locale subdirectories to try, from `LC_ALL`, `LC_MESSAGES` or `LANG` (the first that
    /// is set, as setlocale does): `de_DE.UTF-8@euro` → `de_DE.UTF-8@euro`, `de_DE@euro`,
    /// `de_DE`, `de@euro`, `de`. `C` and `POSIX` have none. The caller tries "no locale" last.
    public static func locales(environment: [String: String]) -> [String] {
        let value = ["LC_ALL", "LC_MESSAGES", "LANG"].lazy.compactMap { environment[$0] }.first { !$0.isEmpty } ?? ""
        return locales(for: value)
    }

    public static func locales(for locale: String) -> [String] {
        guard !locale.isEmpty, locale != "C", locale != "POSIX", !locale.hasPrefix("C.") else { return [] }
        // language[_territory][.codeset][@modifier]
        var rest = Substring(locale)
        var modifier: Substring?
        if let at = rest.firstIndex(of: "@") { modifier = rest[rest.index(after: at)...]; rest = rest[..<at] }
        if let dot = rest.firstIndex(of: ".") { rest = rest[..<dot] }
        let language: Substring
        var territory: Substring?
        if let underscore = rest.firstIndex(of: "_") {
            language = rest[..<underscore]
            territory = rest[rest.index(after: underscore)...]
        } else {
            language = rest
        }
        var variants = [locale]
        let base = territory.map { "\(language)_\($0)" } ?? String(language)
        if let modifier { variants.append("\(base)@\(modifier)") }
        variants.append(base)
        if territory != nil {
            if let modifier { variants.append("\(language)@\(modifier)") }
            variants.append(String(language))
        }
        var seen = Set<String>()
        return variants.filter { !$0.isEmpty && seen.insert($0).inserted }
    }
}
