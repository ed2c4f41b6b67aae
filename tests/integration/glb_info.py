#!/usr/bin/env python3
"""glb_info.py FILE [IMAGE OUT]: print a .glb's counts as "vertices V triangles T joints J
images I" (triangles: index counts / 3 over every primitive); with IMAGE and OUT, also write the
bytes of embedded image number IMAGE to OUT."""
import json
import struct
import sys

with open(sys.argv[1], "rb") as f:
    data = f.read()
jlen = struct.unpack("<I", data[12:16])[0]
doc = json.loads(data[20:20 + jlen])
binary = data[20 + jlen + 8:]
verts = tris = 0
for mesh in doc.get("meshes", []):
    prim0 = mesh["primitives"][0]
    verts += doc["accessors"][prim0["attributes"]["POSITION"]]["count"]
    for prim in mesh["primitives"]:
        tris += doc["accessors"][prim["indices"]]["count"] // 3
joints = sum(len(s["joints"]) for s in doc.get("skins", []))
images = doc.get("images", [])
print(f"vertices {verts} triangles {tris} joints {joints} images {len(images)}")
if len(sys.argv) > 3:
    view = doc["bufferViews"][images[int(sys.argv[2])]["bufferView"]]
    off = view.get("byteOffset", 0)
    with open(sys.argv[3], "wb") as f:
        f.write(binary[off:off + view["byteLength"]])
