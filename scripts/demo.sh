#!/usr/bin/env bash
# README's first command: install what is needed, build everything, boot two emulated servers
# and run traffic between them over tern.
set -euo pipefail
. "$(dirname "$0")/lib/common.sh"
"$TERN_TOP/scripts/build.sh"
exec /usr/bin/python3 "$TERN_TOP/scripts/demo.py"
