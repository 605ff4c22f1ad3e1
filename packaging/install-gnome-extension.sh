#!/bin/sh
# Installs SceneSound's GNOME Shell extension (data/gnome-shell/<uuid>) into
# EXTENSIONS_DIR/<uuid>/, in the variant for the GNOME Shell at hand:
#   install-gnome-extension.sh EXTENSIONS_DIR [43|45]
# 43 is the legacy variant (GNOME 43-44: imports, init/enable/disable), 45 the ES module one
# (GNOME 45 and later). Without a variant: by `gnome-shell --version` when it is installed,
# else 45. The shared windowsService.js is copied as it is for 43; for 45 an `export` line is
# appended, which makes it an ES module.
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
uuid=scenesound-windows@scenesound.org
source_dir=$root/data/gnome-shell/$uuid
extensions_dir=$1
variant=${2:-}
if [ -z "$variant" ]; then
    variant=45
    if version=$(gnome-shell --version 2>/dev/null); then
        major=$(echo "$version" | sed -n 's/^GNOME Shell \([0-9][0-9]*\).*/\1/p')
        if [ -n "$major" ] && [ "$major" -lt 45 ]; then variant=43; fi
    fi
fi
case $variant in
    43|45) ;;
    *) echo "install-gnome-extension.sh: unknown variant '$variant' (accepted: 43 for GNOME 43-44, 45 for GNOME 45 and later)" >&2; exit 2 ;;
esac
target=$extensions_dir/$uuid
install -d "$target"
install -m 0644 "$source_dir/$variant/extension.js" "$source_dir/$variant/metadata.json" "$target/"
install -m 0644 "$source_dir/windowsService.js" "$target/windowsService.js"
if [ "$variant" = 45 ]; then
    printf '\nexport {WindowsService, INTERFACE_XML, OBJECT_PATH, INTERFACE_VERSION};\n' >> "$target/windowsService.js"
fi
echo "installed the GNOME Shell extension $uuid ($variant variant) in $target"
