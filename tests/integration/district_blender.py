# blender -b --factory-startup --python district_blender.py -- SCENE.glb
# Import a district's scene.glb with Blender's own glTF importer and check it against the file:
# one object per arena node (named <collection>/<0xID>.psg), one mesh object per glTF mesh, and
# the world position of three meshes: the centre of each one's bounding box in Blender (Z-up)
# is the centre of its POSITION accessor's min/max in glTF (Y-up) moved by its node, which is
# (x, y, z) -> (x, -z, y); and the world position of three placed props (nodes named
# "prop N 0x<template>": one mesh per template, shown by many nodes), their translation moved
# the same way. Prints one line; exits 1 on a mismatch or an importer failure.
import json
import struct
import sys

import numpy

if not hasattr(numpy, "bool"):
    numpy.bool = bool  # numpy 1.24 removed the alias Blender 3.4's importer still uses
import bpy
from mathutils import Vector


def glb_json(path):
    with open(path, "rb") as f:
        d = f.read()
    n = struct.unpack("<I", d[12:16])[0]
    return json.loads(d[20:20 + n])


def main():
    path = sys.argv[sys.argv.index("--") + 1]
    j = glb_json(path)
    bpy.ops.wm.read_factory_settings(use_empty=True)
    bpy.ops.import_scene.gltf(filepath=path)
    props = [n for n in j["nodes"] if n.get("name", "").startswith("prop ")]
    nodes = [n for n in j["nodes"] if "mesh" not in n and n not in props]
    arenas = [o for o in bpy.data.objects if o.name.startswith("cPres_") and o.type == "EMPTY"]
    meshes = [o for o in bpy.data.objects if o.type == "MESH"]
    bad = []
    if len(arenas) != len(nodes):
        bad.append(f"arena nodes: blender {len(arenas)}, file {len(nodes)}")
    shown = sum(1 for n in j["nodes"] if "mesh" in n)
    if len(meshes) != shown:
        bad.append(f"mesh objects: blender {len(meshes)}, file {shown}")
    checked = 0
    for node in j["nodes"]:
        if "mesh" not in node or checked == 3 or node in props:
            continue
        acc = j["accessors"][j["meshes"][node["mesh"]]["primitives"][0]["attributes"]["POSITION"]]
        c = [(a + b) / 2 for a, b in zip(acc["min"], acc["max"])]
        want = Vector((c[0], -c[2], c[1]))
        # the mesh object under its arena's node (arena names are unique; mesh names are not)
        idx = j["nodes"].index(node)
        arena = next((n["name"] for n in j["nodes"] if idx in n.get("children", [])), None)
        obj = next((o for o in meshes if o.parent and o.parent.name == arena), None)
        if obj is None:
            bad.append(f"mesh {node['mesh']}: no object")
            continue
        pts = [obj.matrix_world @ Vector(v) for v in obj.bound_box]
        got = sum(pts, Vector()) / 8
        if (got - want).length > 1e-3 * max(1.0, want.length):
            bad.append(f"mesh {node['mesh']}: centre {tuple(got)} in Blender, {tuple(want)} in the file")
        checked += 1
    placed = 0
    for node in props[:3]:
        t = node.get("translation", [0, 0, 0])
        want = Vector((t[0], -t[2], t[1]))
        obj = bpy.data.objects.get(node["name"])
        if obj is None:
            bad.append(f"{node['name']}: no object")
            continue
        got = obj.matrix_world.translation
        if (got - want).length > 1e-3 * max(1.0, want.length):
            bad.append(f"{node['name']}: at {tuple(got)} in Blender, {tuple(want)} in the file")
        placed += 1
    print(f"DISTRICT BLENDER {'FAILED ' + '; '.join(bad) if bad else 'ok'}: "
          f"{len(arenas)} arena nodes, {len(meshes)} meshes, {checked} positions checked, "
          f"{placed} props in place")
    sys.exit(1 if bad or checked < 3 or placed < 3 else 0)


try:
    main()
except SystemExit:
    raise
except Exception as e:  # the importer failing is a failure of the file
    print(f"DISTRICT BLENDER FAILED: {e}")
    sys.exit(1)
