"""The committed type stubs (python/edgewise/_edgewise.pyi) match the built module:
tools/gen_stubs.sh regenerates them into a temporary file and the two must agree."""

import ast
import difflib
import importlib.metadata
import importlib.util
import os
import pathlib
import re
import subprocess
import sys

import pytest

import edgewise

ROOT = pathlib.Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "tools" / "gen_stubs.sh"
COMMITTED = ROOT / "python" / "edgewise" / "_edgewise.pyi"


def _version(name):
    try:
        return importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return "none"


def test_the_package_ships_the_stubs_and_the_typed_marker():
    source = ROOT / "python" / "edgewise"
    assert (source / "py.typed").is_file()
    assert COMMITTED.is_file(), "python/edgewise/_edgewise.pyi is missing: run tools/gen_stubs.sh"
    ast.parse(COMMITTED.read_text(), filename=str(COMMITTED))  # valid Python
    built = pathlib.Path(edgewise.__file__).parent
    if built != source:  # the build tree (or an install) carries them next to the module
        assert (built / "py.typed").is_file() and (built / "_edgewise.pyi").is_file()


def test_committed_stubs_match_the_built_module(tmp_path):
    if importlib.util.find_spec("pybind11_stubgen") is None:
        pytest.skip("pybind11-stubgen is not installed (tools/install_deps.sh installs it): stubs not checked")
    header = COMMITTED.read_text().splitlines()[0]
    recorded = re.search(r"pybind11-stubgen (\S+), pybind11 ([^)\s]+)", header)
    assert recorded, f"unexpected first line of {COMMITTED}: {header!r} (rerun tools/gen_stubs.sh)"
    installed = (_version("pybind11-stubgen"), _version("pybind11"))
    if installed != recorded.groups():
        pytest.skip(f"the stubs were generated with pybind11-stubgen {recorded[1]} / pybind11 {recorded[2]}, "
                    f"this environment has {installed[0]} / {installed[1]}: their output differs in form, "
                    "so the comparison would not be meaningful")
    fresh = tmp_path / "_edgewise.pyi"
    package_parent = pathlib.Path(edgewise.__file__).parent.parent
    run = subprocess.run(["bash", str(SCRIPT), str(package_parent), str(fresh)], capture_output=True, text=True,
                         env={**os.environ, "PYTHON": sys.executable})
    assert run.returncode == 0, f"tools/gen_stubs.sh failed:\n{run.stdout}\n{run.stderr}"
    want, got = COMMITTED.read_text().splitlines(), fresh.read_text().splitlines()
    if want != got:
        diff = "\n".join(difflib.unified_diff(want, got, "committed _edgewise.pyi", "regenerated", lineterm="", n=1))
        pytest.fail("python/edgewise/_edgewise.pyi is out of date with the bindings: run tools/gen_stubs.sh "
                    f"(after building the _edgewise target) and commit the result.\n{diff[:4000]}")
