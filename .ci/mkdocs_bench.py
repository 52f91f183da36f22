"""mkdocs hook: the benchmark records as pages of the site, read where they live.

bench/RESULTS.md, CLIENT_RESULTS.md, SPARK_RESULTS.md and bench/plots/*.png are written
by the benchmark runs next to the code that makes them; this adds them to the site under
bench/ (so their relative links to each other and to plots/ keep working) without a copy
in docs/.
"""

from pathlib import Path

from mkdocs.structure.files import File, Files

ROOT = Path(__file__).resolve().parent.parent
BENCH = ROOT / "bench"


def on_files(files: Files, config) -> Files:
    use_urls = config["use_directory_urls"]
    sources = sorted(BENCH.glob("*.md")) + sorted((BENCH / "plots").glob("*.png"))
    for src in sources:
        rel = src.relative_to(ROOT).as_posix()
        files.append(File(rel, str(ROOT), config["site_dir"], use_urls))
    return files


def on_serve(server, config, builder):
    server.watch(str(BENCH))
    return server
