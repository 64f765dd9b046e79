#!/usr/bin/env python3
"""Stride's one entry point.

    python build.py test        lint, type-check and run every test suite
    python build.py demo        the main job on the bundled samples
    python build.py bench       the benchmarks in bench/, side by side

Sets up `.venv` (and cached venvs for other numpy versions under ~/.cache/stride) on first use
and again whenever a requirements file changes.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent
VENV = ROOT / ".venv"
CACHE = Path(os.environ.get("STRIDE_CACHE", Path.home() / ".cache" / "stride"))
MIN_PYTHON = (3, 11)


def log(message: str) -> None:
    print(f"[build] {message}", flush=True)


def run(cmd: list[str | Path], *, env: dict[str, str] | None = None, check: bool = True) -> int:
    log("$ " + " ".join(str(c) for c in cmd))
    result = subprocess.run([str(c) for c in cmd], cwd=ROOT, env=env)
    if check and result.returncode != 0:
        raise SystemExit(result.returncode)
    return result.returncode


def venv_python(venv: Path) -> Path:
    return venv / "bin" / "python"


def find_python(version: str) -> str | None:
    """A working `pythonX.Y`: on PATH, else in pyenv's versions folder."""
    candidates = [shutil.which(f"python{version}")]
    pyenv = Path(os.environ.get("PYENV_ROOT", Path.home() / ".pyenv")) / "versions"
    if pyenv.is_dir():
        candidates += [str(p / "bin" / f"python{version}")
                       for p in sorted(pyenv.glob(f"{version}.*"), reverse=True)]
    for exe in candidates:
        if exe and Path(exe).exists():
            ok = subprocess.run([exe, "-c", "import venv"], capture_output=True).returncode == 0
            if ok:
                return exe
    return None


def ensure_venv(venv: Path, python: str, requirements: list[Path], extra: tuple[str, ...] = ()) -> Path:
    """Create or update a venv; reinstall only when the requirements (or python) change."""
    digest = hashlib.sha256(python.encode())
    for req in requirements:
        digest.update(req.read_bytes())
    for item in extra:
        digest.update(item.encode())
    stamp = venv / ".stride-stamp"
    want = digest.hexdigest()
    if stamp.exists() and stamp.read_text() == want and venv_python(venv).exists():
        return venv_python(venv)
    log(f"setting up {venv}")
    if venv.exists():
        shutil.rmtree(venv)
    run([python, "-m", "venv", venv])
    py = venv_python(venv)
    run([py, "-m", "pip", "install", "-q", "--upgrade", "pip"])
    args: list[str | Path] = [py, "-m", "pip", "install", "-q"]
    for req in requirements:
        args += ["-r", req]
    run(args + list(extra))
    stamp.write_text(want)
    return py


def dev_python() -> Path:
    if sys.version_info < MIN_PYTHON:
        raise SystemExit(f"build.py needs Python {MIN_PYTHON[0]}.{MIN_PYTHON[1]}+, this is {sys.version}")
    return ensure_venv(VENV, sys.executable, [ROOT / "requirements-dev.txt"])


def core_env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(ROOT)
    env.setdefault("PYTHONDONTWRITEBYTECODE", "1")
    return env


def cmd_test(args: argparse.Namespace) -> int:
    py = dev_python()
    summary: list[tuple[str, str, float]] = []

    def stage(name: str, cmd: list[str | Path], env: dict[str, str] | None = None) -> None:
        t0 = time.perf_counter()
        code = run(cmd, env=env or core_env(), check=False)
        summary.append((name, "passed" if code == 0 else f"FAILED ({code})", time.perf_counter() - t0))

    if not args.no_lint:
        stage("ruff", [py, "-m", "ruff", "check", "."])
        typed = [d for d in ("core", "tests", "bench", "samples", "blender_addon")
                 if any((ROOT / d).rglob("*.py"))]
        stage("mypy", [py, "-m", "mypy", *typed, "build.py"])
    stage(f"core tests (numpy {numpy_version(py)})", [py, "-m", "pytest", "tests/core", *args.pytest_args])
    if not args.quick:
        py311 = find_python("3.11")
        if py311 is None:
            summary.append(("core tests (numpy 1.26)", "FAILED (no python3.11 found)", 0.0))
        else:
            old = ensure_venv(CACHE / "venv-np126", py311, [ROOT / "requirements-np126.txt"])
            stage("core tests (numpy 1.26)", [old, "-m", "pytest", "tests/core", "-p", "no:cacheprovider",
                                              *args.pytest_args])
    print("\n== summary ==")
    for name, status, seconds in summary:
        print(f"  {name:<32} {status:<12} {seconds:7.1f} s")
    failed = [s for s in summary if not s[1].startswith("passed")]
    print(f"{len(summary) - len(failed)} passed, {len(failed)} failed")
    return 1 if failed else 0


def numpy_version(py: Path) -> str:
    out = subprocess.run([py, "-c", "import numpy; print(numpy.__version__)"], capture_output=True, text=True)
    return out.stdout.strip() or "?"


def cmd_demo(args: argparse.Namespace) -> int:
    py = dev_python()
    return run([py, ROOT / "samples" / "demo.py", *args.files], env=core_env(), check=False)


def cmd_bench(args: argparse.Namespace) -> int:
    py = dev_python()
    scripts = sorted((ROOT / "bench").glob("*.py"))
    if args.only:
        scripts = [s for s in scripts if s.stem in args.only]
    code = 0
    for script in scripts:
        code |= run([py, script], env=core_env(), check=False)
    return code


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="build.py", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    t = sub.add_parser("test", help="ruff, mypy and all test suites")
    t.add_argument("--quick", action="store_true", help="only the main venv (skip numpy 1.26)")
    t.add_argument("--no-lint", action="store_true", help="skip ruff and mypy")
    t.add_argument("pytest_args", nargs=argparse.REMAINDER, help="passed on to pytest (after --)")
    d = sub.add_parser("demo", help="run the demo on the bundled samples")
    d.add_argument("files", nargs="*", help="BVH files (default: samples/*.bvh)")
    b = sub.add_parser("bench", help="run the benchmarks")
    b.add_argument("only", nargs="*", help="bench script names (default: all)")
    args = parser.parse_args(argv)
    if getattr(args, "pytest_args", None) and args.pytest_args[0] == "--":
        args.pytest_args = args.pytest_args[1:]
    return {"test": cmd_test, "demo": cmd_demo, "bench": cmd_bench}[args.command](args)


if __name__ == "__main__":
    sys.exit(main())
