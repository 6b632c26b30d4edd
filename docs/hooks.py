"""mkdocs hook (docs/mkdocs.yml), on every page after it is rendered:

1. mkdocs-jupyter writes one MathJax URL into every notebook page, but pages sit at different depths: make it
   relative to each page, so the site works offline and under any base path.
2. Notebooks link to each other and to the repository's files as they lie in the checkout (`../howto/gpu.ipynb`,
   `../../docs/images/dashboard.png`; the index, which is also the README, from the repository's root:
   `nbs/studies/01_chooser.ipynb`, `docs/design.md`). mkdocs rewrites links only in markdown pages, so here each relative
   link of a notebook page is resolved against the notebook's place in the checkout and pointed at the page or file
   the site has for it: `nbs/X.ipynb` -> `X.html`, `docs/images/Y` -> `images/Y`, `docs/design.md` -> `design.html`."""
import posixpath
import re

from mkdocs.utils import get_relative_url

LINK = re.compile(r'(href|src)="(?![a-z][a-z0-9+.-]*:|#|/)([^"#?]+)([^"]*)"')
# where a file of the checkout lives in the site
SITE_PATHS = [("nbs/", ""), ("docs/images/", "images/"), ("docs/design.md", "design.md")]


def _site_path(repo_path: str):
    for prefix, to in SITE_PATHS:
        if repo_path.startswith(prefix):
            path = to + repo_path[len(prefix):] if prefix.endswith("/") else to
            return re.sub(r"\.(ipynb|md)$", ".html", path)
    return None


def on_post_page(output: str, page, config) -> str:
    output = output.replace("@@SITE_ROOT@@", get_relative_url(".", page.url))
    src = page.file.src_uri
    if not src.endswith(".ipynb"):
        return output
    # the index is the README too: its links are written from the repository's root
    here = "" if src == "index.ipynb" else posixpath.dirname(f"nbs/{src}")

    def point(m):
        repo_path = posixpath.normpath(posixpath.join(here, m[2]))
        site = _site_path(repo_path)
        if site is None:
            return m[0]
        return f'{m[1]}="{get_relative_url(site, page.url)}{m[3]}"'

    return LINK.sub(point, output)
