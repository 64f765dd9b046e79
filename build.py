#!/usr/bin/env python3
"""Stride's one entry point.

    python build.py test        lint, type-check and run every test suite
    python build.py demo        the main job on the bundled samples
    python build.py bench       the benchmarks in bench/, side by side
    python build.py extension   the Blender extension zip in dist/, validated by Blender's own tool

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
from typing import Any

ROOT = Path(__file__).resolve().parent
VENV = ROOT / ".venv"
CACHE = Path(os.environ.get("STRIDE_CACHE", Path.home() / ".cache" / "stride"))
MIN_PYTHON = (3, 11)
DIST = ROOT / "dist"
ADDON = ROOT / "blender_addon"

# Blender as a Python module (`bpy` wheels), each with the Python it needs and the numpy it ships:
# the 4.2 wheel does not pin numpy and breaks with numpy 2.
BLENDER = {
    "4.2": ("4.2.23", "3.11", ("numpy<2",)),
    "4.5": ("4.5.15", "3.11", ()),
    "5.0": ("5.0.1", "3.11", ()),
    "5.2": ("5.2.3", "3.13", ()),
}
DEFAULT_BLENDER = "4.5"


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


def requirement_files(req: Path) -> list[Path]:
    """`req` and every file it includes with `-r` (pip's own syntax), depth first: a change in an
    included file must reinstall as a change in the including one does."""
    found = [req]
    for line in req.read_text().splitlines():
        words = line.split("#", 1)[0].split()
        if len(words) >= 2 and words[0] in ("-r", "--requirement"):
            found += requirement_files(req.parent / words[1])
        elif words and words[0].startswith("--requirement="):
            found += requirement_files(req.parent / words[0].split("=", 1)[1])
    return found


def ensure_venv(venv: Path, python: str, requirements: list[Path], extra: tuple[str, ...] = ()) -> Path:
    """Create or update a venv; reinstall only when the requirements (or python) change."""
    # The interpreter's identity, not its path: a pyenv shim and the binary it runs are one python.
    who = subprocess.run([python, "-c", "import sys; print(sys.version, sys.base_prefix)"],
                         capture_output=True, text=True).stdout
    digest = hashlib.sha256(who.encode())
    for req in requirements:
        for part in requirement_files(req):
            digest.update(part.read_bytes())
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


def shared_venv(name: str, requirements: list[Path]) -> Path:
    """A venv under the shared cache named for its requirements: worktrees on branches with other
    requirements each keep their own instead of reinstalling one another's."""
    digest = hashlib.sha256()
    for req in requirements:
        for part in requirement_files(req):
            digest.update(part.read_bytes())
    return CACHE / f"{name}-{digest.hexdigest()[:10]}"


def dev_python() -> Path:
    if sys.version_info < MIN_PYTHON:
        raise SystemExit(f"build.py needs Python {MIN_PYTHON[0]}.{MIN_PYTHON[1]}+, this is {sys.version}")
    return ensure_venv(VENV, sys.executable, [ROOT / "requirements-dev.txt"])


def core_env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(ROOT)
    env.setdefault("PYTHONDONTWRITEBYTECODE", "1")
    return env


def blender_python(version: str) -> Path:
    """The venv python of a bpy wheel, installed on first use (cached under ~/.cache/stride)."""
    wheel, python_version, extra = BLENDER[version]
    python = find_python(python_version)
    if python is None:
        raise RuntimeError(f"Blender {version} needs python{python_version}, which is not installed")
    return ensure_venv(CACHE / f"bpy-{wheel}", python, [ROOT / "requirements-blender.txt"],
                       (f"bpy=={wheel}", *extra))


def manifest_version() -> str:
    import tomllib

    return tomllib.loads((ADDON / "blender_manifest.toml").read_text())["version"]


def build_extension(validate_with: str = DEFAULT_BLENDER) -> Path:
    """dist/stride-<version>.zip: the add-on with the core bundled as its `core` subpackage."""
    import zipfile

    files: list[tuple[Path, str]] = []
    for path in sorted(ADDON.rglob("*")):
        rel = path.relative_to(ADDON)
        if rel.parts[0] == "core" or "__pycache__" in rel.parts or path.is_dir():
            continue
        files.append((path, rel.as_posix()))
    for path in sorted((ROOT / "core").rglob("*.py")):
        if "__pycache__" not in path.parts:
            files.append((path, "core/" + path.relative_to(ROOT / "core").as_posix()))
    DIST.mkdir(exist_ok=True)
    target = DIST / f"stride-{manifest_version()}.zip"
    tmp = target.with_suffix(".zip.tmp")
    with zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED) as zf:
        for path, name in files:
            zf.write(path, name)
    os.replace(tmp, target)
    py = blender_python(validate_with)
    pattern = "lib/python*/site-packages/bpy/*/scripts/addons_core/bl_pkg/cli/blender_ext.py"
    tools = sorted(py.parent.parent.glob(pattern))
    if not tools:
        raise RuntimeError(f"blender_ext.py not found in the bpy {validate_with} wheel")
    run([py, tools[0], "validate", target])
    log(f"built {target.relative_to(ROOT)} ({len(files)} files), validated by Blender {validate_with}")
    return target


def run_in_blender(script: Path, version: str = DEFAULT_BLENDER) -> int:
    """Run `script` in a bpy wheel's Python with the freshly built extension (STRIDE_EXTENSION_ZIP)
    and the repo on PYTHONPATH, as the demo and the Blender benchmarks do; there the script calls
    `install_extension`."""
    env = dict(os.environ, STRIDE_EXTENSION_ZIP=str(build_extension()), PYTHONPATH=str(ROOT))
    return subprocess.run([blender_python(version), script], env=env).returncode


def rerun_in_blender(script: Path, argv: list[str], description: str | None) -> int:
    """From the dev Python, a script that runs inside Blender (the demo, the Blender benchmarks):
    run it again in a bpy wheel's Python (`--blender VERSION`, run_in_blender)."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--blender", default=DEFAULT_BLENDER, choices=list(BLENDER),
                        help=f"Blender version to run in (default {DEFAULT_BLENDER})")
    return run_in_blender(script, parser.parse_args(argv).blender)


def install_extension() -> Any:
    """Inside a bpy wheel's Python (the Blender tests, the demo, the Blender benchmarks): the built
    extension (STRIDE_EXTENSION_ZIP, which `build.py test` and run_in_blender set) installed the way a
    user installs it, into a throwaway Blender user folder (BLENDER_USER_RESOURCES, removed at exit)
    so that nothing touches the user's config; the installed package (bl_ext.user_default.stride).
    Call it before bpy is imported: Blender reads its user folder once, as it starts."""
    import atexit
    import importlib
    import tempfile

    zip_path = os.environ.get("STRIDE_EXTENSION_ZIP")
    if not zip_path or not Path(zip_path).is_file():
        raise RuntimeError("STRIDE_EXTENSION_ZIP must name the built extension zip: run this through "
                           "`python build.py` (test, demo or bench)")
    if "bpy" in sys.modules:
        raise RuntimeError("install_extension must run before bpy is imported, or the install would go "
                           "into the user's own Blender folder")
    user = tempfile.mkdtemp(prefix="stride-blender-user-")
    atexit.register(shutil.rmtree, user, True)  # Blender uses it until the end
    os.environ["BLENDER_USER_RESOURCES"] = user
    import bpy

    result = bpy.ops.extensions.package_install_files(filepath=zip_path, repo="user_default",
                                                      enable_on_install=True)
    if result != {"FINISHED"}:
        raise RuntimeError(f"installing {zip_path} failed: {result}")
    return importlib.import_module("bl_ext.user_default.stride")


def cmd_extension(args: argparse.Namespace) -> int:
    build_extension()
    return 0


def cmd_test(args: argparse.Namespace) -> int:
    py = dev_python()
    summary: list[tuple[str, str, float]] = []

    def stage(name: str, cmd: list[str | Path], env: dict[str, str] | None = None) -> None:
        t0 = time.perf_counter()
        code = run(cmd, env=env or core_env(), check=False)
        summary.append((name, "passed" if code == 0 else f"FAILED ({code})", time.perf_counter() - t0))

    if not args.no_lint:
        stage("ruff", [py, "-m", "ruff", "check", "."])
        # Two runs: each test suite has its own conftest.py, which one mypy run sees as one module twice.
        core_side = [p for p in ("core", "tests/core", "tests/conftest.py", "tests/fixtures.py",
                                 "tests/settings_snapshot.py",
                                 "tests/variants.py", "bench", "samples", "build.py")
                     if (ROOT / p).exists() and _has_python(ROOT / p)]
        stage("mypy (core)", [py, "-m", "mypy", *core_side])
        stage("mypy (blender_addon)", [py, "-m", "mypy", "blender_addon", "tests/blender"])
    stage(f"core tests (numpy {numpy_version(py)})", [py, "-m", "pytest", "tests/core", *args.pytest_args])
    if not args.quick:
        py311 = find_python("3.11")
        if py311 is None:
            summary.append(("core tests (numpy 1.26)", "FAILED (no python3.11 found)", 0.0))
        else:
            reqs = [ROOT / "requirements-np126.txt"]
            old = ensure_venv(shared_venv("venv-np126", reqs), py311, reqs)
            stage("core tests (numpy 1.26)", [old, "-m", "pytest", "tests/core", "-p", "no:cacheprovider",
                                              *args.pytest_args])
    versions = args.blender or list(BLENDER)
    skip = {v.strip() for v in os.environ.get("STRIDE_SKIP_BLENDER", "").split(",") if v.strip()}
    unknown = (set(versions) | skip) - set(BLENDER)
    if unknown:
        raise SystemExit(f"unknown Blender version(s) {sorted(unknown)}; known: {', '.join(BLENDER)}")
    zip_path: Path | None = None
    if not args.no_blender:
        t0 = time.perf_counter()
        try:
            zip_path = build_extension()
            summary.append(("extension build + validate", "passed", time.perf_counter() - t0))
        except (RuntimeError, SystemExit) as exc:
            summary.append(("extension build + validate", f"FAILED ({exc})", time.perf_counter() - t0))
    for version in ([] if args.no_blender else versions):
        name = f"blender {BLENDER[version][0]} tests"
        if version in skip:
            summary.append((name, "skipped (STRIDE_SKIP_BLENDER)", 0.0))
            continue
        t0 = time.perf_counter()
        try:
            bpy_py = blender_python(version)
        except (RuntimeError, SystemExit) as exc:
            summary.append((name, f"FAILED (install: {exc})", time.perf_counter() - t0))
            continue
        if zip_path is None:
            summary.append((name, "FAILED (no extension zip)", 0.0))
            continue
        env = core_env()
        env["STRIDE_EXTENSION_ZIP"] = str(zip_path)
        stage(name, [bpy_py, "-m", "pytest", "tests/blender", "-p", "no:cacheprovider", *args.pytest_args],
              env=env)
    print("\n== summary ==")
    for name, status, seconds in summary:
        print(f"  {name:<32} {status:<12} {seconds:7.1f} s")
    failed = [s for s in summary if not s[1].startswith("passed")]
    print(f"{len(summary) - len(failed)} passed, {len(failed)} failed")
    return 1 if failed else 0


def _has_python(path: Path) -> bool:
    return path.suffix == ".py" or any(path.rglob("*.py"))


def numpy_version(py: Path) -> str:
    out = subprocess.run([py, "-c", "import numpy; print(numpy.__version__)"], capture_output=True, text=True)
    return out.stdout.strip() or "?"


def cmd_demo(args: argparse.Namespace) -> int:
    py = dev_python()
    t0 = time.perf_counter()
    code = run([py, ROOT / "samples" / "demo.py", "--blender", args.blender], env=core_env(), check=False)
    if code == 0:
        code = run([py, ROOT / "samples" / "pictures.py", "--out", ROOT / "out" / "pictures"],
                   env=core_env(), check=False)
    log(f"demo finished in {time.perf_counter() - t0:.0f} s (exit {code})")
    return code


def cmd_bench(args: argparse.Namespace) -> int:
    py = dev_python()
    if args.numpy == "1.26":
        # The numpy Blender 4.2-5.0 bundles, with the peer readers the BVH benchmark compares.
        py = ensure_venv(CACHE / "venv-bench-np126", sys.executable, [ROOT / "requirements-np126.txt"],
                         extra=("pybvh==0.9.0", "bvhio==1.5.4"))
    # Scripts whose names start with '_' are what the benchmarks share, not benchmarks.
    scripts = sorted(s for s in (ROOT / "bench").glob("*.py") if not s.name.startswith("_"))
    if args.only:
        scripts = [s for s in scripts if s.stem in args.only]
    code = 0
    for script in scripts:
        # Only the Blender benchmarks run inside Blender; they take the version.
        inside = script.stem in ("blender", "evaluated")
        extra = ["--blender", args.blender] if args.blender and inside else []
        code |= run([py, script, *extra], env=core_env(), check=False)
    return code


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="build.py", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    t = sub.add_parser("test", help="ruff, mypy and all test suites")
    t.add_argument("--quick", action="store_true", help="only the main venv (skip numpy 1.26)")
    t.add_argument("--no-lint", action="store_true", help="skip ruff and mypy")
    t.add_argument("--blender", action="append", choices=list(BLENDER),
                   help="run the Blender tests on this version only (repeatable; default: all)")
    t.add_argument("--no-blender", action="store_true", help="skip the extension and Blender tests")
    t.add_argument("pytest_args", nargs=argparse.REMAINDER, help="passed on to pytest (after --)")
    d = sub.add_parser("demo", help="the main job on the bundled samples, inside Blender")
    d.add_argument("--blender", default=DEFAULT_BLENDER, choices=list(BLENDER),
                   help=f"Blender version to run in (default {DEFAULT_BLENDER})")
    sub.add_parser("extension", help="build and validate dist/stride-<version>.zip")
    b = sub.add_parser("bench", help="run the benchmarks")
    b.add_argument("only", nargs="*", help="bench script names (default: all)")
    b.add_argument("--numpy", choices=["1.26"],
                   help="run on numpy 1.26 (Blender 4.2-5.0's) instead of the dev numpy")
    b.add_argument("--blender", choices=list(BLENDER),
                   help=f"Blender version for the Blender benchmarks (default {DEFAULT_BLENDER})")
    args = parser.parse_args(argv)
    if getattr(args, "pytest_args", None) and args.pytest_args[0] == "--":
        args.pytest_args = args.pytest_args[1:]
    commands = {"test": cmd_test, "demo": cmd_demo, "bench": cmd_bench, "extension": cmd_extension}
    return commands[args.command](args)


if __name__ == "__main__":
    sys.exit(main())
