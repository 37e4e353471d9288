#!/bin/sh
# Render an oomplan timeline (SVG or HTML) in headless Chromium and check that
# the screenshot is not blank. Not part of the lit/ctest suite (which only
# checks that the SVG is well-formed XML); run it by hand or in CI where
# Debian's chromium package is installed (apt-get install -y chromium).
#
#   utils/check/render_timeline.sh timeline.svg [out.png]
#
# Exit 0: rendered, and the PNG has enough distinct colours to hold the
# stacked areas; 1: Chromium failed or the picture is blank; 2: usage.
set -eu
if [ $# -lt 1 ]; then
  echo "usage: $0 TIMELINE.svg|.html [OUT.png]" >&2
  exit 2
fi
in=$(readlink -f "$1")
out=${2:-${1%.*}.png}
browser=$(command -v chromium || command -v chromium-browser || true)
if [ -z "$browser" ]; then
  echo "render_timeline: chromium not found (apt-get install -y chromium)" >&2
  exit 1
fi
profile=$(mktemp -d)
trap 'rm -rf "$profile"' EXIT
rm -f "$out"
"$browser" --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
  --disable-background-networking --disable-component-update --disable-sync \
  --user-data-dir="$profile" --hide-scrollbars --window-size=1200,800 \
  --screenshot="$(readlink -f "$(dirname "$out")")/$(basename "$out")" \
  "file://$in" >/dev/null 2>&1 || true
if [ ! -s "$out" ]; then
  echo "render_timeline: no screenshot written" >&2
  exit 1
fi
# Decode the PNG with the standard library only and count distinct colours.
/usr/bin/python3 - "$out" <<'PY'
import struct, sys, zlib
data = open(sys.argv[1], "rb").read()
assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
pos, idat, hdr = 8, b"", None
while pos < len(data):
    n, kind = struct.unpack(">I4s", data[pos:pos + 8])
    body = data[pos + 8:pos + 8 + n]
    if kind == b"IHDR":
        hdr = struct.unpack(">IIBBBBB", body)
    elif kind == b"IDAT":
        idat += body
    pos += 12 + n
w, h, depth, ctype = hdr[0], hdr[1], hdr[2], hdr[3]
bpp = {2: 3, 6: 4, 0: 1, 4: 2}[ctype] * depth // 8
raw, stride = zlib.decompress(idat), w * bpp
prev, colours, k = bytearray(stride), set(), 0
for y in range(h):
    f, line = raw[k], bytearray(raw[k + 1:k + 1 + stride])
    k += 1 + stride
    for i in range(stride):
        a = line[i - bpp] if i >= bpp else 0
        b, c = prev[i], prev[i - bpp] if i >= bpp else 0
        if f == 1: line[i] = (line[i] + a) & 255
        elif f == 2: line[i] = (line[i] + b) & 255
        elif f == 3: line[i] = (line[i] + (a + b) // 2) & 255
        elif f == 4:
            p = a + b - c
            pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
            line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
    if y % 4 == 0:
        for x in range(0, stride, bpp * 4):
            colours.add(bytes(line[x:x + 3]))
    prev = line
print("render_timeline: %s: %dx%d, %d distinct colours" % (sys.argv[1], w, h, len(colours)))
sys.exit(0 if len(colours) >= 6 else "render_timeline: the screenshot looks blank")
PY
