#!/bin/sh
# Writes a man page for PROGRAM from its --help (and, for a program with subcommands, from
# `PROGRAM help SUBCOMMAND` of each one): help2man's idea, without needing help2man.
#   help-to-man.sh PROGRAM_PATH SECTION > NAME.SECTION
set -eu
program=$1
section=${2:-1}
name=$(basename "$program")

# Man source must not start lines with . or ' and treats \ specially.
escape() { sed -e 's/\\/\\e/g' -e "s/^\\([.']\\)/\\\\\\&\\1/"; }

help=$("$program" --help)
summary=$(printf '%s\n' "$help" | sed -n 's/^OVERVIEW: //p' | head -n 1)
cat <<HEADER
.\\" -*- coding: UTF-8 -*-
.TH $(echo "$name" | tr '[:lower:]' '[:upper:]') $section "" "SceneSound $("$program" --version)" "SceneSound"
.SH NAME
$name \\- $summary
.SH DESCRIPTION
.nf
HEADER
printf '%s\n' "$help" | escape
# Subcommands are listed, two spaces in, under SUBCOMMANDS: up to the next blank line.
subcommands=$(printf '%s\n' "$help" | awk '/^SUBCOMMANDS:/ {on=1; next} on && /^$/ {exit} on && /^  [a-z]/ {print $1}')
for subcommand in $subcommands; do
    echo ".fi"
    echo ".SH \"$(echo "$name $subcommand" | tr '[:lower:]' '[:upper:]')\""
    echo ".nf"
    "$program" help "$subcommand" | escape
done
cat <<FOOTER
.fi
.SH SEE ALSO
scenesound(1), scenesoundd(1), protocol/SPEC.md and scenesound.h in the SceneSound sources
FOOTER
