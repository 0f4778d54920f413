#!/bin/bash
# A golden run of the CLI, for refactors that must keep every output byte: every query command
# over every target, format and backend (cpu, and gpu where one opens, lavapipe included),
# clip, overlaps, render, gen, stdin, --skip-invalid and the error messages. Each invocation's
# stdout, stderr (timings dropped), exit status and files land in OUTDIR; run it with the old
# binary and the new one, then `diff -r` the two folders.
#
#   scripts/golden.sh OLD_BINARY /tmp/golden-old
#   scripts/golden.sh target/release/rectcast /tmp/golden-new
#   diff -r /tmp/golden-old /tmp/golden-new
#
# The inputs are generated once (by the first binary) into $GOLDEN_IN (default: golden-in beside
# OUTDIR), so both runs read the same files. Not part of scripts/test.sh.
set -u
BIN=$(realpath "$1"); OUT=$2
rm -rf "$OUT"; mkdir -p "$OUT/files"
IN=$(realpath -m "${GOLDEN_IN:-$(dirname "$OUT")/golden-in}")
export IN
n=0
run() { # name, then the command's arguments
    local name=$1; shift
    n=$((n + 1))
    if [ "$1" = sh ]; then
        local cmd=${3//BIN/$BIN}
        (cd "$OUT/files" && sh -c "$cmd" > "../$name.stdout" 2> "../$name.stderr"; echo $? > "../$name.rc")
    else
        (cd "$OUT/files" && "$BIN" "$@" > "../$name.stdout" 2> "../$name.stderr"; echo $? > "../$name.rc")
    fi
    # Progress lines and timings are not results.
    sed -i -E '/[0-9.]+ ?(ms|s|µs|Gpairs|Mpairs)/d' "$OUT/$name.stderr"
}
if [ ! -d $IN ]; then
    mkdir -p $IN
    "$BIN" gen --kind bullet-hell --segments 3000 --rects 300 --out-dir $IN/bh >/dev/null
    "$BIN" gen --kind random --segments 1500 --rects 150 --out-dir $IN/rnd --format npy >/dev/null
    "$BIN" gen --kind adversarial --segments 800 --rects 80 --out-dir $IN/adv --format f32 >/dev/null
    "$BIN" gen --kind random --segments 120 --rects 1 --out-dir $IN/walls >/dev/null
    python3 - <<'EOF'
import os, random
os.chdir(os.environ["IN"])
random.seed(7)
with open("circles.csv", "w") as f:
    f.write("cx,cy,r\n")
    for _ in range(100):
        f.write(f"{random.uniform(0, 1000):.3f},{random.uniform(0, 1000):.3f},{random.uniform(0, 40):.3f}\n")
with open("polygons.wkt", "w") as f:
    f.write("POLYGON ((100 100, 400 100, 400 400, 300 400, 300 200, 200 200, 200 400, 100 400, 100 100))\n")
    f.write("POLYGON ((500 500, 900 520, 700 900, 500 500))\n")
    f.write("POLYGON ((0 0, 1920 0, 1920 20, 0 20, 0 0))\n")
with open("bad.csv", "w") as f:
    f.write("x0,y0,x1,y1\n1,2,3,4\n5,6,nan,8\n")
with open("ragged.csv", "w") as f:
    f.write("x0,y0,x1,y1\n1,2,3,4\n5,6,7\n")
EOF
fi
S=$IN/bh/segments.csv
for backend in cpu gpu; do
    for target in "--rects $IN/bh/rects.csv" "--walls $IN/walls/segments.csv" "--circles $IN/circles.csv" "--polygons $IN/polygons.wkt"; do
        t=$(echo "$target" | cut -d' ' -f1 | tr -d -)
        for cmd in pairs first-hit hits count; do
            exts="csv npy parquet"
            [ $backend = gpu ] && exts=csv   # formats are the CPU run's business
            for ext in $exts; do
                run "$backend-$t-$cmd-$ext" $cmd --segments $S $target --backend $backend --out "$backend-$t-$cmd.$ext"
            done
        done
        run "$backend-$t-first-hit-stdout" first-hit --segments $IN/rnd/segments.npy $target --backend $backend
        for bp in on off; do
            [ $backend = gpu ] && [ $bp = off ] && continue
            run "$backend-$t-hits-bp-$bp" hits --segments $IN/adv/segments.f32 $target --backend $backend --broad-phase $bp
        done
    done
    run "$backend-rects-rnd-first" first-hit --segments $IN/rnd/segments.npy --rects $IN/rnd/rects.npy --backend $backend
    run "$backend-rects-adv-hits" hits --segments $IN/adv/segments.f32 --rects $IN/adv/rects.f32 --backend $backend
    run "$backend-clip-one" clip --segments $S --rect 100,100,900,700 --backend $backend
    run "$backend-clip-each" clip --segments $IN/rnd/segments.npy --rects $IN/rnd/segments.npy --backend $backend
    run "$backend-overlaps" overlaps --polygons $IN/polygons.wkt --other $IN/polygons.wkt --backend $backend
    run "$backend-render-png" render --segments $S --rects $IN/bh/rects.csv --backend $backend --out "$backend-r.png"
    run "$backend-render-svg" render --segments $S --polygons $IN/polygons.wkt --backend $backend --out "$backend-r.svg"
    every="--rects $IN/bh/rects.csv --walls $IN/walls/segments.csv --circles $IN/circles.csv --polygons $IN/polygons.wkt"
    run "$backend-render-all" render --segments $IN/walls/segments.csv $every --query pairs --backend $backend --out "$backend-all.svg"
    run "$backend-render-all-png" render --segments $IN/walls/segments.csv $every --backend $backend --out "$backend-all.png"
done
run gz first-hit --segments $S --rects $IN/bh/rects.csv --backend cpu --out "fh.csv.gz"
run err-nan first-hit --segments $IN/bad.csv --rects $IN/bh/rects.csv --backend cpu
run err-ragged first-hit --segments $IN/ragged.csv --rects $IN/bh/rects.csv --backend cpu
run err-missing first-hit --segments /nonexistent.csv --rects $IN/bh/rects.csv
run err-ext first-hit --segments $S --rects $IN/bh/rects.csv --out x.zst
run err-folder first-hit --segments $S --rects $IN/bh/rects.csv --out nofolder/x.csv
run err-bp pairs --segments $S --rects $IN/bh/rects.csv --broad-phase on
run err-target first-hit --segments $S
run err-render render --segments $S --rects $IN/bh/rects.csv --out x.jpg
run err-view render --segments $S --rects $IN/bh/rects.csv --view 5,5,5,5 --out x.png
run gen gen --kind random --segments 50 --rects 5 --out-dir g --format csv
run err-f32-walls hits --segments $S --walls $IN/walls/segments.csv --out x.f32
run err-bad-circles first-hit --segments $S --circles $IN/bad.csv
run skip-bad-walls count --segments $S --walls $IN/bad.csv --skip-invalid --backend cpu
run skip-bad-segments first-hit --segments $IN/bad.csv --circles $IN/circles.csv --skip-invalid --backend cpu
run skip-bad-polygons-seg hits --segments $IN/bad.csv --polygons $IN/polygons.wkt --skip-invalid --backend cpu --out sbp.npy
run stdin-walls sh -c "cat $S | BIN first-hit --segments - --walls $IN/walls/segments.csv --backend cpu"
run two-stdin first-hit --segments - --rects -
run pairs-chunked-poly pairs --segments $IN/rnd/segments.npy --polygons $IN/polygons.wkt --backend cpu --out pcp.npy
echo "$n runs"
