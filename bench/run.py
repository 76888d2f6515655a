"""Runs every benchmark of the project and prints each figure with its name.

Each `bench/bench_*.py` module exposes `run() -> list[tuple[name, value, unit]]`.
Usage: `python bench/run.py [substring ...]` to run only the matching modules.
"""

from __future__ import annotations

import importlib.util
import pathlib
import sys
import time


def main(argv: list[str]) -> int:
    here = pathlib.Path(__file__).resolve().parent
    if importlib.util.find_spec("pyhpa") is None:  # an installed pyhpa comes first
        sys.path.insert(0, str(here.parent))
    import pyhpa
    modules = sorted(here.glob("bench_*.py"))
    if argv:
        modules = [m for m in modules if any(a in m.stem for a in argv)]
    failed = 0
    # Figures depend on the interpreter's build (a PGO/LTO build ran the simulator ~1.2x faster).
    print(f"python {sys.version.split()[0]} at {pathlib.Path(sys.executable).resolve()}", flush=True)
    print(f"pyhpa at {pathlib.Path(pyhpa.__file__).parent}", flush=True)
    for path in modules:
        spec = importlib.util.spec_from_file_location(path.stem, path)
        mod = importlib.util.module_from_spec(spec)
        assert spec.loader is not None
        started = time.perf_counter()
        try:
            spec.loader.exec_module(mod)
            results = mod.run()
        except Exception as exc:  # a broken benchmark must not hide the others
            failed += 1
            print(f"{path.stem}: FAILED: {exc!r}", flush=True)
            continue
        for name, value, unit in results:
            print(f"{path.stem}.{name}: {value:,.2f} {unit}", flush=True)
        print(f"{path.stem}: done in {time.perf_counter() - started:.1f}s", flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
