"""Run 47's images compared below the demo's overlay (its frame-time bar differs from run
to run): python3 overlay.py DIR, with DIR the unpacked run47.tgz."""
import sys

import numpy as np
from PIL import Image


def diff(a, b, top):
    x = np.asarray(Image.open(a)).astype(int)[top:]
    y = np.asarray(Image.open(b)).astype(int)[top:]
    d = np.abs(x - y).max(axis=2)
    return f"max {d.max()}, {(d > 0).sum()} of {d.size} pixels differ"


d = sys.argv[1]
for v in (1, 3):
    print(f"gltf24 views {v}, welded vs given, rows 30+:", diff(f"{d}/gltf24-v{v}-welded.png", f"{d}/gltf24-v{v}-given.png", 30))
print("cubes 1080p, old vs new, rows 46+:", diff(f"{d}/cubes-old-r1.png", f"{d}/cubes-new-r1.png", 46))
