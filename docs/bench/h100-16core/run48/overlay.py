"""Run 48's images of the two binaries compared below the demo's overlay (its frame-time
bar differs from run to run): python3 overlay.py DIR, with DIR the unpacked run48.tgz."""
import sys

import numpy as np
from PIL import Image

d = sys.argv[1]
for v in (3, 1):
    for r in (1, 2):
        x = np.asarray(Image.open(f"{d}/cubes-v{v}-old-r{r}.png")).astype(int)[46:]
        y = np.asarray(Image.open(f"{d}/cubes-v{v}-new-r{r}.png")).astype(int)[46:]
        diff = np.abs(x - y).max(axis=2)
        print(f"cubes views {v} round {r}, old vs new, rows 46+: max {diff.max()}, {(diff > 0).sum()} of {diff.size} pixels differ")
