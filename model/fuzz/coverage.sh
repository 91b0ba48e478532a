#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# What the committed fuzz corpora reach in model/lib: each fuzzer built with clang's
# source-based coverage (no sanitizers), the committed corpus model/fuzz/corpus/NAME replayed
# once (-runs=0), and per file and per function the coverage of model/lib; at the end the
# functions of model/lib that no fuzzer reaches.
#   model/fuzz/coverage.sh [-f] [NAME...]     (default: every fuzzer; -f: per function too)
# Output in model/build/cov/ (TERN_COV_OUT): NAME.profdata, NAME.txt (llvm-cov report),
# NAME.json (llvm-cov export), unreached.txt.
set -e
MODEL=$(cd "$(dirname "$0")/.." && pwd)
OUT=${TERN_COV_OUT:-$MODEL/build/cov}
LLVM_PROFDATA=${LLVM_PROFDATA:-$(command -v llvm-profdata-14 || command -v llvm-profdata)}
LLVM_COV=${LLVM_COV:-$(command -v llvm-cov-14 || command -v llvm-cov)}
FUNCS=
if [ "$1" = -f ]; then
	FUNCS=1
	shift
fi
NAMES=${*:-"cmd wire switch guest eth"}
mkdir -p "$OUT"
# the fuzzers' own rules (model/Makefile), coverage instead of the sanitizers; -j1: the
# machine is shared
for n in $NAMES; do
	make -s -C "$MODEL" BUILD="$OUT" \
		FUZZ_FLAGS="-std=gnu11 -g -O1 -fsanitize=fuzzer -fprofile-instr-generate -fcoverage-mapping -Wall -Wextra -Werror" \
		"$OUT/fuzz-$n"
done
for n in $NAMES; do
	rm -f "$OUT/$n"-*.profraw
	LLVM_PROFILE_FILE="$OUT/$n-%p.profraw" "$OUT/fuzz-$n" -runs=0 -detect_leaks=0 \
		-max_len=70000 "$MODEL/fuzz/corpus/$n" >"$OUT/$n.replay.log" 2>&1 ||
		echo "fuzz-$n: the replay failed (see $OUT/$n.replay.log)" >&2
	"$LLVM_PROFDATA" merge -sparse -o "$OUT/$n.profdata" "$OUT/$n"-*.profraw
	rm -f "$OUT/$n"-*.profraw
	"$LLVM_COV" report "$OUT/fuzz-$n" -instr-profile="$OUT/$n.profdata" \
		"$MODEL"/lib/*.c >"$OUT/$n.txt"
	"$LLVM_COV" export "$OUT/fuzz-$n" -instr-profile="$OUT/$n.profdata" \
		"$MODEL"/lib/*.c >"$OUT/$n.json"
	echo "== fuzz-$n: model/lib (functions, lines) =="
	sed -n '/^Filename/p;/^TOTAL/p' "$OUT/$n.txt" | sed 's/   */  /g'
	if [ -n "$FUNCS" ]; then
		"$LLVM_COV" report "$OUT/fuzz-$n" -instr-profile="$OUT/$n.profdata" \
			-show-functions "$MODEL"/lib/*.c
	fi
done
python3 - "$OUT" "$MODEL" $NAMES <<'PY'
import json, os, sys
out, model, names = sys.argv[1], sys.argv[2], sys.argv[3:]
lib = os.path.join(model, "lib") + "/"
funcs = {}      # (file, name) -> {fuzzer: count}
lines = {}      # file -> {line: reached by any}
for n in names:
    with open(os.path.join(out, n + ".json")) as f:
        data = json.load(f)["data"][0]
    for fn in data["functions"]:
        fname = fn["filenames"][0]
        if not fname.startswith(lib):
            continue
        key = (os.path.basename(fname), fn["name"].split(":")[-1])
        c = funcs.setdefault(key, {})    # a header's function: one record per file using it
        c[n] = max(c.get(n, 0), fn["count"])
    for fl in data["files"]:
        if not fl["filename"].startswith(lib):
            continue
        d = lines.setdefault(os.path.basename(fl["filename"]), {})
        for seg in fl["segments"]:
            line, _col, count, has_count, entry = seg[:5]
            if has_count:
                d[line] = d.get(line, False) or count > 0
print("== all fuzzers together: model/lib functions reached, per file ==")
per = {}
for (fname, name), c in funcs.items():
    p = per.setdefault(fname, [0, 0])
    p[1] += 1
    p[0] += any(v > 0 for v in c.values())
tot = [0, 0]
for fname in sorted(per):
    r, t = per[fname]
    tot[0] += r
    tot[1] += t
    print("  %-16s %4d / %4d functions" % (fname, r, t))
print("  %-16s %4d / %4d functions (%.1f%%)" % ("TOTAL", tot[0], tot[1],
                                                 100.0 * tot[0] / max(tot[1], 1)))
un = sorted(k for k, c in funcs.items() if not any(v > 0 for v in c.values()))
with open(os.path.join(out, "unreached.txt"), "w") as f:
    for fname, name in un:
        f.write("%s %s\n" % (fname, name))
print("== model/lib functions no fuzzer reaches (%d; %s/unreached.txt) ==" % (len(un), out))
for fname, name in un:
    print("  %s: %s" % (fname, name))
PY
