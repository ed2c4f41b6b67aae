#!/usr/bin/env python3
"""glb_props.py SCENE.glb PROPS.tsv: every resolved row of a district's props.tsv (model not
"unresolved") is a node of scene.glb named "prop N 0x<template id>" in row order, at the row's
x y z, rotation and scale, showing a mesh (its own or a child's); unresolved rows have none.
Checks at least three props; prints one line, exits 1 on a mismatch."""
import json
import struct
import sys

with open(sys.argv[1], "rb") as f:
    data = f.read()
doc = json.loads(data[20:20 + struct.unpack("<I", data[12:16])[0]])
nodes = doc["nodes"]
props = [n for n in nodes if n.get("name", "").startswith("prop ")]
rows = [r.rstrip("\n").split("\t") for r in open(sys.argv[2]).readlines()[1:]]
rows = [r for r in rows if r[8] != "unresolved"]
bad = []
if len(props) != len(rows):
    bad.append(f"{len(props)} prop nodes, {len(rows)} resolved rows")
for i, (n, r) in enumerate(zip(props, rows)):
    if n["name"] != f"prop {i} {r[4]}":
        bad.append(f"node {n['name']}: row {i} names {r[4]}")
    want = [float(v) for v in r[9:19]]
    got = n.get("translation", [0, 0, 0]) + n.get("rotation", [0, 0, 0, 1]) + n.get("scale", [1, 1, 1])
    if any(abs(a - b) > 1e-3 * max(1.0, abs(b)) for a, b in zip(got, want)):
        bad.append(f"{n['name']}: {got} in the scene, {want} in props.tsv")
    kids = [nodes[k] for k in n.get("children", [])]
    if "mesh" not in n and not any("mesh" in k for k in kids):
        bad.append(f"{n['name']}: no mesh")
print(f"glb_props: {len(props)} prop nodes{': ' + '; '.join(bad) if bad else ' ok'}")
sys.exit(1 if bad or len(props) < 3 else 0)
