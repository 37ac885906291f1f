"""Recompute the retired TorchScript exporter's claims (the page's `documented` column).

    # from a torch wheel, e.g. the 2.8 one, fetched without its dependencies:
    pip download torch==2.8.0 --no-deps -d wheels/
    python scripts/recompute_documented.py --wheel wheels/torch-2.8.0-*.whl

    # from the TorchScript registry still shipped inside the installed torch:
    python scripts/recompute_documented.py

Writes docs/data/documented.json (operator -> lowest opset with a symbolic),
computed the way PyTorch's docs built onnx_torchscript_supported_aten_ops.
"""

import argparse
import sys
from pathlib import Path

from opsweep.page import documented


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--wheel", type=Path, help="a torch wheel to read (not installed, not imported)")
    parser.add_argument("--out", type=Path, default=Path("docs/data/documented.json"))
    args = parser.parse_args()
    if args.wheel:
        claims = documented.from_wheel(args.wheel)
        source = f"{args.wheel.name}: torch/onnx symbolic_opset*.py, parsed"
    else:
        import torch
        claims = documented.from_installed()
        source = f"torch {torch.__version__}: internal TorchScript symbolic registry"
    documented.save(args.out, claims, source)
    print(f"{len(claims)} operators claimed ({source}) -> {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
