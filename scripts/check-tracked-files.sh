#!/usr/bin/env bash
# Fails when git tracks a build output: a file over 1 MB, or an executable
# binary (ELF, Mach-O, PE). Scripts may be executable; binaries may not.
set -euo pipefail
cd "$(git rev-parse --show-toplevel)"

status=0
while IFS= read -r -d '' f; do
	[ -f "$f" ] || continue
	size=$(stat -c %s "$f")
	if [ "$size" -gt 1048576 ]; then
		echo "tracked file over 1 MB: $f ($size bytes)" >&2
		status=1
	fi
	magic=$(head -c 4 "$f" | od -An -tx1 | tr -d ' \n')
	case "$magic" in
	7f454c46 | cffaedfe | cefaedfe | feedface | feedfacf | 4d5a*)
		echo "tracked executable binary: $f" >&2
		status=1
		;;
	esac
done < <(git ls-files -z)
exit "$status"
