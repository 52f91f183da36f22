"""What users install (issue 47): the sdist holds everything a build needs, and the
release wheel CI installs is stripped and tagged manylinux2014.

Building a wheel from the sdist (``pip wheel`` of it) is a full release build, too long
for the suite; the sdist's contents are checked instead, against the source tree.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tarfile
from importlib import metadata
from pathlib import Path

import pytest
import xstreams

ROOT = Path(__file__).resolve().parent.parent
MATURIN = shutil.which("maturin", path=str(Path(sys.executable).parent))


@pytest.mark.skipif(MATURIN is None, reason="maturin is not installed beside this Python")
def test_sdist_holds_every_source_file(tmp_path):
    r = subprocess.run(
        [MATURIN, "sdist", "-o", str(tmp_path)],
        cwd=ROOT,  # pyproject.toml names the crate
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert r.returncode == 0, r.stderr
    (sdist,) = tmp_path.glob("xstreams-*.tar.gz")
    with tarfile.open(sdist) as tar:
        names = {n.split("/", 1)[1] for n in tar.getnames() if "/" in n}
        workspace = tar.extractfile(f"{sdist.name[: -len('.tar.gz')]}/Cargo.toml").read()
    for top in ("pyproject.toml", "Cargo.toml", "Cargo.lock", "README.md", "PKG-INFO"):
        assert top in names, top
    package = ROOT / "python" / "xstreams"
    wanted = [p for p in package.iterdir() if p.suffix in (".py", ".pyi", ".typed")]
    for p in wanted:
        assert p.relative_to(ROOT).as_posix() in names, p
    # the crates the extension links, each with all its sources
    for crate in ("xstreams-core", "xstreams-py", "xstreams-server"):
        src = ROOT / "rust" / crate / "src"
        for p in src.rglob("*.rs"):
            assert p.relative_to(ROOT).as_posix() in names, p
        assert f'"rust/{crate}"'.encode() in workspace
    # the tests' fuzz crate is not part of the package, and the workspace says so
    assert b"xstreams-fuzz" not in workspace


def _installed_tag() -> str:
    wheel = metadata.distribution("xstreams").read_text("WHEEL") or ""
    return " ".join(
        line.split(":", 1)[1].strip() for line in wheel.splitlines() if line.startswith("Tag:")
    )


@pytest.mark.skipif(
    os.environ.get("CI") != "true" or os.environ.get("XSTREAMS_PROFILE", "release") != "release",
    reason="CI's release wheel only (a developer's wheel may be a dev build)",
)
def test_ci_installs_the_release_wheel_as_users_get_it():
    tag = _installed_tag()
    assert "manylinux_2_17_x86_64" in tag or "manylinux2014_x86_64" in tag, tag
    so = Path(xstreams._xstreams.__file__)
    readelf = shutil.which("readelf")
    if readelf is None:
        pytest.skip("readelf (binutils) is missing: the tag was checked, the debug info not")
    sections = subprocess.run([readelf, "-S", "-W", str(so)], capture_output=True, text=True)
    assert sections.returncode == 0, sections.stderr
    assert ".debug_info" not in sections.stdout and ".debug_line" not in sections.stdout
