# blender -b --factory-startup --python gltf_blender.py -- LIST
# Import every .glb named in LIST (one path a line) with Blender's own glTF importer, each into
# an empty scene of the one Blender started, and compare what Blender built with what the file
# says: triangles (those with three distinct corners; Blender drops the others), armature bones
# (the skin's joints), vertices carrying a weight (every vertex a skinned primitive uses), shape
# keys (morph targets) and actions (at least one per animation). One line per file; exit 1 on any
# mismatch or importer failure. Files with a node translation beyond 1e6 are skipped: there a
# bone's head and tail round to the same float, Blender deletes the bone and its importer fails
# (only hostile inputs have such coordinates).
import json
import struct
import sys

import numpy

if not hasattr(numpy, "bool"):
    numpy.bool = bool  # numpy 1.24 removed the alias Blender 3.4's importer still uses
import bpy


def glb_json(path):
    with open(path, "rb") as f:
        d = f.read()
    n = struct.unpack("<I", d[12:16])[0]
    return json.loads(d[20:20 + n]), d[20 + n + 8:]


def expected(path):
    j, b = glb_json(path)
    tris = verts = keys = 0
    skinned = False
    for m in j.get("meshes", []):
        keys += len(m["primitives"][0].get("targets", []))
        for p in m["primitives"]:
            a = j["accessors"][p["indices"]]
            v = j["bufferViews"][a["bufferView"]]
            dt = {5123: numpy.uint16, 5125: numpy.uint32}[a["componentType"]]
            ix = numpy.frombuffer(b, dtype=dt, count=a["count"], offset=v.get("byteOffset", 0))
            t = ix.reshape(-1, 3)
            ok = (t[:, 0] != t[:, 1]) & (t[:, 1] != t[:, 2]) & (t[:, 0] != t[:, 2])
            tris += int(ok.sum())
            verts += len(numpy.unique(ix))  # Blender keeps each primitive's own vertices
            skinned |= "JOINTS_0" in p["attributes"]
    bones = sum(len(s["joints"]) for s in j.get("skins", []))
    return tris, bones, verts if skinned else 0, keys, len(j.get("animations", []))


def built():
    tris = sum(len(o.data.polygons) for o in bpy.data.objects if o.type == "MESH")
    bones = sum(len(o.data.bones) for o in bpy.data.objects if o.type == "ARMATURE")
    weighted = keys = 0
    for o in bpy.data.objects:
        if o.type != "MESH":
            continue
        if o.vertex_groups:
            weighted += sum(1 for v in o.data.vertices if any(g.weight > 0 for g in v.groups))
        if o.data.shape_keys:
            keys += len(o.data.shape_keys.key_blocks) - 1  # less the basis
    return tris, bones, weighted, keys, len(bpy.data.actions)


def far(path):
    j, _ = glb_json(path)
    return any(abs(x) > 1e6 for n in j.get("nodes", []) for x in n.get("translation", []))


# Every kind of block an import makes, and the factory scene's cube, camera and light. Removing
# them empties the scene at a fraction of read_factory_settings' cost (it reloads the startup
# file and the add-ons: ~50 ms a file, two thirds of the run on ~190 files).
KINDS = ("objects", "meshes", "armatures", "actions", "materials", "images", "textures",
         "node_groups", "cameras", "lights", "collections")


def empty_scene():
    bpy.data.batch_remove([b for k in KINDS for b in getattr(bpy.data, k)])
    left = [k for k in KINDS if len(getattr(bpy.data, k))]
    if left:  # the counts below would include them
        sys.exit("BLENDER FAILED: the scene does not empty (%s)" % ", ".join(left))


files = [l for l in open(sys.argv[sys.argv.index("--") + 1]).read().split("\n") if l]
bad = skipped = 0
for path in files:
    if far(path):
        print("BLENDER skipped %s: coordinates beyond Blender's float precision" % path)
        skipped += 1
        continue
    empty_scene()
    try:
        res = bpy.ops.import_scene.gltf(filepath=path)
    except Exception as e:  # the importer's own failure: report it, go on
        print("BLENDER FAILED %s: %s" % (path, str(e).strip().splitlines()[-1]))
        bad += 1
        continue
    want, got = expected(path), built()
    ok = res == {"FINISHED"} and got[:4] == want[:4] and got[4] >= want[4]
    bad += not ok
    print("BLENDER %s %s triangles %d/%d bones %d/%d weighted %d/%d shape_keys %d/%d "
          "actions %d/%d" % ("ok" if ok else "MISMATCH", path, got[0], want[0], got[1], want[1],
                             got[2], want[2], got[3], want[3], got[4], want[4]))
print("BLENDER imported %d files, %d failed, %d skipped" % (len(files) - skipped, bad, skipped))
sys.exit(1 if bad else 0)
